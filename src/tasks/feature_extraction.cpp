#include "tasks/feature_extraction.h"

namespace mobius {

EncoderInputs Encoder::token_inputs(GraphBuilder& b) const {
  const Shape tokens{"batch_size", "sequence_length"};
  EncoderInputs in;
  in.input_ids = b.input("input_ids", DataType::INT64, tokens);
  in.attention_mask = b.input("attention_mask", DataType::INT64, tokens);
  in.token_type_ids = has_token_type_ids() ? b.input("token_type_ids", DataType::INT64, tokens) : nullptr;
  for (const ExtraInput& e : extra_inputs()) {
    Shape shape = tokens;
    for (int64_t d : e.trailing) shape.push_back(d);
    in.extra.push_back(b.input(e.name, e.dtype, shape));
  }
  return in;
}

Model Encoder::build_model() const {
  Model model;
  GraphBuilder b(model.graph);
  Ops op(b);
  const EncoderOutputs out = forward_outputs(op, token_inputs(b));
  b.output(out.last_hidden_state, "last_hidden_state", {"batch_size", output_length(), hidden_size()});
  if (out.pooler_output) b.output(out.pooler_output, "pooler_output", {"batch_size", hidden_size()});
  return model;
}

}  // namespace mobius
