#include "package/gguf_tokenizer.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <unordered_map>

#include "util/error.h"
#include "util/input_files.h"

namespace mobius {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

constexpr int kControl = 3;      // llama.cpp LLAMA_TOKEN_TYPE_CONTROL
constexpr int kUserDefined = 4;  // LLAMA_TOKEN_TYPE_USER_DEFINED
const char* const kMetaspace = "\xe2\x96\x81";  // U+2581, sentencepiece's space

// Pre-tokenizer regexes by tokenizer.ggml.pre (gguf_tokenizer_mapping.py GGUF_PRE_TOKENIZER_SPLITS,
// with qwen2 / qwen3_5 tokenization_*.py PRETOKENIZE_REGEX).
const char* const kLlama3Split =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kTekkenSplit =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kGpt4oSplit =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kQwen2Split =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kQwen35Split =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const std::map<std::string, const char*> kPreTokenizerSplits = {
    {"llama3", kLlama3Split},      {"llama-v3", kLlama3Split},   {"llama-bpe", kLlama3Split},
    {"falcon3", kLlama3Split},     {"falcon-h1", kLlama3Split},  {"pixtral", kLlama3Split},
    {"midm-2.0", kLlama3Split},    {"lfm2", kLlama3Split},       {"jina-v5-nano", kLlama3Split},
    {"dbrx", kLlama3Split},        {"smaug-bpe", kLlama3Split},  {"tekken", kTekkenSplit},
    {"qwen2", kQwen2Split},        {"deepseek-r1-qwen", kQwen2Split}, {"kormo", kQwen2Split},
    {"f2llmv2", kQwen2Split},      {"megrez", kQwen2Split},      {"qwen35", kQwen35Split},
    {"gpt-4o", kGpt4oSplit},       {"llama4", kGpt4oSplit},      {"kanana2", kGpt4oSplit},
    {"talkie", kGpt4oSplit},       {"minimax-m2", kGpt4oSplit},
};

// Byte offsets of the code point boundaries of `s` (0, ..., s.size()), and the code points; nullopt
// when `s` is not UTF-8.
struct CodePoints {
  std::vector<size_t> bounds;
  std::vector<uint32_t> cps;
};
std::optional<CodePoints> decode_utf8(std::string_view s) {
  CodePoints r;
  size_t i = 0;
  while (i < s.size()) {
    r.bounds.push_back(i);
    const auto b = static_cast<unsigned char>(s[i]);
    const int n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return std::nullopt;
    uint32_t cp = n == 1 ? b : b & (0x7f >> n);
    for (int k = 1; k < n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c >> 6) != 2) return std::nullopt;
      cp = cp << 6 | (c & 0x3f);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return std::nullopt;
    r.cps.push_back(cp);
    i += n;
  }
  r.bounds.push_back(s.size());
  return r;
}

std::string encode_utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xc0 | cp >> 6);
    s += static_cast<char>(0x80 | (cp & 0x3f));
  } else {  // the byte alphabet stays below U+0800; U+2581 is spelled as a literal
    s += static_cast<char>(0xe0 | cp >> 12);
    s += static_cast<char>(0x80 | (cp >> 6 & 0x3f));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  }
  return s;
}

// Python's str.isspace() (Unicode White_Space but U+180E; bidi WS/B/S or category Zs).
bool is_space(uint32_t c) {
  return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

// GPT-2's byte -> code point table (convert_slow_tokenizer.py bytes_to_unicode): printable bytes
// stand for themselves, the others for 256, 257, ... in byte order.
const std::array<uint32_t, 256>& byte_alphabet() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    uint32_t next = 256;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
      t[b] = printable ? b : next++;
    }
    return t;
  }();
  return table;
}

bool in_byte_alphabet(uint32_t cp) {
  const auto& t = byte_alphabet();
  return std::find(t.begin(), t.end(), cp) != t.end();
}

// The tokenizer.* metadata transformers reads (GGUF_TOKENIZER_MAPPING), typed and checked.
struct Metadata {
  const GgufFile& file;
  std::string model;  // tokenizer.ggml.model
  std::vector<std::string> tokens;
  std::vector<int64_t> types;  // empty when absent
  std::vector<double> scores;  // empty when absent
  std::optional<std::vector<std::string>> merges;

  [[noreturn]] void fail(const std::string& key, const std::string& msg) const {
    throw Error(file.path() + ": key '" + key + "': " + msg);
  }
  const GgufValue* array(const std::string& key, bool integer, bool real, bool string) const {
    const GgufValue* v = file.find_key(key);
    if (!v) return nullptr;
    if (v->type() != GgufValueType::ARRAY) fail(key, "expected an array, got " + gguf_value_type_name(v->type()));
    const GgufValueType e = v->element_type();
    const GgufValue probe(e, {});
    const bool ok = (string && e == GgufValueType::STRING) || (integer && probe.is_integer()) ||
                    (real && (e == GgufValueType::FLOAT32 || e == GgufValueType::FLOAT64));
    if (!ok) fail(key, "unexpected element type " + gguf_value_type_name(e));
    return v;
  }
  std::vector<std::string> strings(const std::string& key, const GgufValue& v) const {
    std::vector<std::string> out;
    out.reserve(v.size());
    for (const GgufValue& e : v.elements()) {
      if (!decode_utf8(e.as_string()))
        fail(key, "element " + std::to_string(out.size()) + " is not UTF-8 text");
      out.emplace_back(e.as_string());
    }
    return out;
  }
  std::optional<bool> flag(const std::string& key) const {
    const GgufValue* v = file.find_key(key);
    if (!v) return std::nullopt;
    if (v->type() != GgufValueType::BOOL) fail(key, "expected a bool, got " + gguf_value_type_name(v->type()));
    return v->as_bool();
  }
  // The integer `v` of `key` (an element of it: `what`), refused beyond int64 (a uint64 2^64 - 1).
  int64_t integer(const std::string& key, const GgufValue& v, const std::string& what = "") const {
    if (v.type() == GgufValueType::UINT64 && v.to_json().get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      fail(key, what + "the integer " + std::to_string(v.to_json().get<uint64_t>()) + " is out of range");
    return v.as_int();
  }
  // The id tokenizer.ggml.<key> names, checked to be in [0, tokens); nullopt when the key is absent.
  std::optional<int64_t> special_id(const std::string& key) const {
    const std::string k = "tokenizer.ggml." + key;
    const GgufValue* v = file.find_key(k);
    if (!v) return std::nullopt;
    if (!v->is_integer()) fail(k, "expected an integer, got " + gguf_value_type_name(v->type()));
    const int64_t id = integer(k, *v);
    if (id < 0 || id >= static_cast<int64_t>(tokens.size()))
      fail(k, "token id " + std::to_string(id) + " is outside the vocabulary of " + std::to_string(tokens.size()) +
                  " tokens");
    return id;
  }
  // tokens[tokenizer.ggml.<key>], or null when the key is absent.
  json special_token(const std::string& key) const {
    const std::optional<int64_t> id = special_id(key);
    return id ? json(tokens[static_cast<size_t>(*id)]) : json(nullptr);
  }
};

// The first index of each distinct token, and each token's id: the last index it has (a Python dict
// built in index order).
struct Vocab {
  std::vector<size_t> first;  // indices of first occurrences, in order
  std::unordered_map<std::string, int64_t> id;
};
Vocab make_vocab(const std::vector<std::string>& tokens) {
  Vocab v;
  v.id.reserve(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    auto [it, fresh] = v.id.insert_or_assign(tokens[i], static_cast<int64_t>(i));
    if (fresh) v.first.push_back(i);
  }
  return v;
}

using Merge = std::pair<std::string, std::string>;

// generate_merges(vocab, vocab_scores) (tokenization_utils_base.py): every split of every token into
// two tokens, each token's splits ordered by the pieces' ids, all of them stably sorted by
// (score of the token, length of the left piece, of the right piece) descending, lengths in code
// points. `score(i)` is the score of the token whose (last) index is i.
template <typename Score>
std::vector<Merge> generate_merges(const Metadata& m, const std::vector<std::string>& tokens, const Vocab& vocab,
                                   Score score) {
  // The work (bytes hashed looking the splits up, and at most as many bytes of merges) grows with
  // the square of a token's length: bound it by the vocabulary's own size, so that a small file
  // of long tokens ('a' x k for every k) cannot take gigabytes and minutes. Real vocabularies
  // (tokens of a few bytes) take a few times their size.
  uint64_t vocab_bytes = 0, work = 0;
  for (size_t i : vocab.first) {
    const uint64_t n = tokens[i].size();
    vocab_bytes += n;
    work += n * (n > 0 ? n - 1 : 0);
  }
  const uint64_t budget = 64 * vocab_bytes + (uint64_t{1} << 26);
  if (work > budget)
    m.fail("tokenizer.ggml.tokens", "deriving the merges from these tokens takes " + std::to_string(work) +
                                        " bytes of work, more than mobius' limit of " + std::to_string(budget) +
                                        " for a vocabulary of " + std::to_string(vocab_bytes) +
                                        " bytes (tokens this long are no real vocabulary; a file with "
                                        "tokenizer.ggml.merges needs no derivation)");
  struct Candidate {
    const std::string* token;
    size_t split;  // byte offset
    double score;
    size_t left_cps, right_cps;
    int64_t left_id, right_id;
  };
  std::vector<Candidate> all;
  for (size_t i : vocab.first) {
    const std::string& t = tokens[i];
    const double s = score(vocab.id.at(t));
    const CodePoints cp = *decode_utf8(t);  // checked when read
    const size_t n = cp.cps.size();
    std::vector<Candidate> local;
    for (size_t k = 1; k < n; ++k) {
      auto l = vocab.id.find(t.substr(0, cp.bounds[k])), r = vocab.id.find(t.substr(cp.bounds[k]));
      if (l != vocab.id.end() && r != vocab.id.end())
        local.push_back({&t, cp.bounds[k], s, k, n - k, l->second, r->second});
    }
    std::stable_sort(local.begin(), local.end(), [](const Candidate& a, const Candidate& b) {
      return std::tie(a.left_id, a.right_id) < std::tie(b.left_id, b.right_id);
    });
    all.insert(all.end(), local.begin(), local.end());
  }
  std::stable_sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(a.score, a.left_cps, a.right_cps) > std::tie(b.score, b.left_cps, b.right_cps);
  });
  std::vector<Merge> merges;
  merges.reserve(all.size());
  for (const Candidate& c : all) merges.emplace_back(c.token->substr(0, c.split), c.token->substr(c.split));
  return merges;
}

// get_merges: the file's merges ("left right"), else generate_merges over `score`.
template <typename Score>
std::vector<Merge> file_or_generated_merges(const Metadata& m, const std::vector<std::string>& tokens,
                                            const Vocab& vocab, Score score) {
  if (!m.merges) return generate_merges(m, tokens, vocab, score);
  std::vector<Merge> out;
  out.reserve(m.merges->size());
  for (const std::string& s : *m.merges) {
    const size_t sp = s.find(' ');
    if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
      m.fail("tokenizer.ggml.merges", "merge '" + escaped(s) + "' is not two tokens separated by one space");
    out.emplace_back(s.substr(0, sp), s.substr(sp + 1));
  }
  return out;
}

json bpe_model(const std::vector<std::string>& tokens, const Vocab& vocab, const std::vector<Merge>& merges,
               json unk_token, json prefix_suffix, bool fuse_unk, bool byte_fallback) {
  json v = json::object();
  auto& entries = v.get_ref<json::object_t&>();  // appended in id order (keys are distinct)
  entries.reserve(vocab.first.size());
  for (size_t i : vocab.first) entries.emplace_back(tokens[i], vocab.id.at(tokens[i]));
  json m = json::array();
  for (const Merge& mg : merges) m.push_back({mg.first, mg.second});
  return {{"type", "BPE"},           {"dropout", nullptr},          {"unk_token", unk_token},
          {"continuing_subword_prefix", prefix_suffix}, {"end_of_word_suffix", prefix_suffix},
          {"fuse_unk", fuse_unk},    {"byte_fallback", byte_fallback}, {"ignore_merges", false},
          {"vocab", std::move(v)},   {"merges", std::move(m)}};
}

json replace(const std::string& from, const std::string& to) {
  return {{"type", "Replace"}, {"pattern", {{"String", from}}}, {"content", to}};
}

json sentencepiece_decoder(bool strip_prefix) {
  json d = json::array({replace(kMetaspace, " "), {{"type", "ByteFallback"}}, {{"type", "Fuse"}}});
  if (strip_prefix) d.push_back({{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}});
  return {{"type", "Sequence"}, {"decoders", d}};
}

json byte_level(bool add_prefix_space, bool use_regex) {
  return {{"type", "ByteLevel"}, {"add_prefix_space", add_prefix_space}, {"trim_offsets", true}, {"use_regex", use_regex}};
}

// The tokenizer.json pieces of one tokenizer class: model, normalizer, pre-tokenizer, decoder,
// and the vocabulary as it spells the tokens (for the added tokens' and special tokens' ids).
struct Backend {
  json model, normalizer, pre_tokenizer, decoder;
  Vocab vocab;
  const char* tokenizer_class;  // as transformers' save_pretrained names the class it loaded
};

// byte_level_tokenizer: GPT2Tokenizer over the tokens in the byte alphabet.
Backend gpt2_backend(const Metadata& m) {
  std::vector<std::string> spelled = m.tokens;
  for (std::string& t : spelled) {
    const CodePoints cp = *decode_utf8(t);
    if (std::all_of(cp.cps.begin(), cp.cps.end(), in_byte_alphabet)) continue;
    std::string s;
    for (unsigned char b : t) s += encode_utf8(byte_alphabet()[b]);
    t = std::move(s);
  }
  Backend b;
  b.vocab = make_vocab(spelled);
  if (!m.merges && m.scores.empty())
    m.fail("tokenizer.ggml.merges", "missing, and no tokenizer.ggml.scores to derive the merges from");
  auto score = [&](int64_t id) { return m.scores.at(static_cast<size_t>(id)); };
  b.model = bpe_model(spelled, b.vocab, file_or_generated_merges(m, spelled, b.vocab, score), nullptr, "", false, false);
  b.normalizer = nullptr;
  b.pre_tokenizer = byte_level(false, true);
  b.decoder = byte_level(true, true);
  b.tokenizer_class = "TokenizersBackend";
  return b;
}

// sentencepiece_tokenizer: LlamaTokenizer (merges ranked by the scores).
Backend llama_backend(const Metadata& m) {
  Backend b;
  b.vocab = make_vocab(m.tokens);
  if (!m.merges && m.scores.empty())
    m.fail("tokenizer.ggml.scores", "missing, and no tokenizer.ggml.merges: the merges cannot be derived");
  auto score = [&](int64_t id) { return m.scores.at(static_cast<size_t>(id)); };
  b.model = bpe_model(m.tokens, b.vocab, file_or_generated_merges(m, m.tokens, b.vocab, score), nullptr, nullptr,
                      true, true);
  b.normalizer = nullptr;
  b.pre_tokenizer = {{"type", "Metaspace"}, {"replacement", kMetaspace}, {"prepend_scheme", "first"}, {"split", false}};
  b.decoder = sentencepiece_decoder(true);
  b.tokenizer_class = "TokenizersBackend";
  return b;
}

// gemma_tokenizer: GemmaTokenizer over the tokens with all-whitespace ones containing a space
// respelled as U+2581 (one per code point), merges ranked by token position.
Backend gemma_backend(const Metadata& m) {
  std::vector<std::string> spelled = m.tokens;
  for (std::string& t : spelled) {
    const CodePoints cp = *decode_utf8(t);
    if (t.find(' ') == std::string::npos || !std::all_of(cp.cps.begin(), cp.cps.end(), is_space)) continue;
    std::string s;
    for (size_t k = 0; k < cp.cps.size(); ++k) s += kMetaspace;
    t = std::move(s);
  }
  Backend b;
  b.vocab = make_vocab(spelled);
  auto position = [](int64_t id) { return -static_cast<double>(id); };
  b.model = bpe_model(spelled, b.vocab, file_or_generated_merges(m, spelled, b.vocab, position), "<unk>", nullptr,
                      true, true);
  b.normalizer = replace(" ", kMetaspace);
  b.pre_tokenizer = {{"type", "Split"}, {"pattern", {{"String", " "}}}, {"behavior", "MergedWithPrevious"}, {"invert", false}};
  b.decoder = sentencepiece_decoder(false);
  b.tokenizer_class = "GemmaTokenizer";
  return b;
}

Metadata read_metadata(const GgufFile& file, std::string model) {
  Metadata m{file, std::move(model), {}, {}, {}, std::nullopt};
  const GgufValue* tokens = m.array("tokenizer.ggml.tokens", false, false, true);
  if (!tokens) m.fail("tokenizer.ggml.tokens", "missing (tokenizer.ggml.model is set)");
  m.tokens = m.strings("tokenizer.ggml.tokens", *tokens);
  auto same_length = [&](const std::string& key, const GgufValue& v) {
    if (v.size() != m.tokens.size())
      m.fail(key, std::to_string(v.size()) + " entries for " + std::to_string(m.tokens.size()) + " tokens");
  };
  if (const GgufValue* t = m.array("tokenizer.ggml.token_type", true, false, false)) {
    same_length("tokenizer.ggml.token_type", *t);
    for (const GgufValue& e : t->elements())
      m.types.push_back(m.integer("tokenizer.ggml.token_type", e, "element " + std::to_string(m.types.size()) + ": "));
  }
  if (const GgufValue* s = m.array("tokenizer.ggml.scores", false, true, false)) {
    same_length("tokenizer.ggml.scores", *s);
    for (const GgufValue& e : s->elements()) m.scores.push_back(e.as_float());
  }
  if (const GgufValue* g = m.array("tokenizer.ggml.merges", false, false, true))
    m.merges = m.strings("tokenizer.ggml.merges", *g);
  return m;
}

// add_gguf_special_tokens: control tokens as special added tokens (byte-level: only those spelled
// in the byte alphabet), user-defined tokens in the vocabulary as plain ones; in id order.
json added_tokens(const Metadata& m, const Backend& b) {
  std::map<int64_t, json> by_id;
  for (size_t i = 0; i < m.types.size(); ++i) {
    const std::string& t = m.tokens[i];
    const bool control = m.types[i] == kControl, user = m.types[i] == kUserDefined;
    if (!control && !user) continue;
    auto it = b.vocab.id.find(t);
    if (it == b.vocab.id.end()) continue;  // respelled: a control token out of the byte alphabet too
    by_id.emplace(it->second, json{{"id", it->second}, {"content", t}, {"single_word", false}, {"lstrip", false},
                                   {"rstrip", false}, {"normalized", false}, {"special", control}});
  }
  json out = json::array();
  for (auto& [_, token] : by_id) out.push_back(std::move(token));
  return out;
}

// TokenizersBackend.update_post_processor: "[bos:0] $A:0 [eos:0]" and the pair template.
json post_processor(bool add_bos, const json& bos, int64_t bos_id, bool add_eos, const json& eos, int64_t eos_id) {
  auto special = [](const json& token, int type_id) { return json{{"SpecialToken", {{"id", token}, {"type_id", type_id}}}}; };
  auto sequence = [](const char* id, int type_id) { return json{{"Sequence", {{"id", id}, {"type_id", type_id}}}}; };
  json single = json::array(), pair = json::array(), tokens = json::object();
  for (int part = 0; part < 2; ++part) {
    json& t = part == 0 ? single : pair;
    if (part == 1) t = single;
    if (add_bos) t.push_back(special(bos, part));
    t.push_back(sequence(part == 0 ? "A" : "B", part));
    if (add_eos) t.push_back(special(eos, part));
  }
  if (add_bos) tokens[bos.get<std::string>()] = {{"id", bos}, {"ids", {bos_id}}, {"tokens", {bos}}};
  if (add_eos) tokens[eos.get<std::string>()] = {{"id", eos}, {"ids", {eos_id}}, {"tokens", {eos}}};
  return {{"type", "TemplateProcessing"}, {"single", single}, {"pair", pair}, {"special_tokens", tokens}};
}

}  // namespace

std::optional<GgufTokenizer> gguf_tokenizer(const GgufFile& file) {
  const GgufValue* mv = file.find_key("tokenizer.ggml.model");
  if (!mv) return std::nullopt;
  if (mv->type() != GgufValueType::STRING)
    throw Error(file.path() + ": key 'tokenizer.ggml.model': expected a string, got " + gguf_value_type_name(mv->type()));
  const Metadata m = read_metadata(file, std::string(mv->as_string()));
  const GgufValue* av = file.find_key("general.architecture");
  const std::string arch = av && av->type() == GgufValueType::STRING ? std::string(av->as_string()) : "";
  Backend b;
  if (m.model == "gpt2") {
    b = gpt2_backend(m);
  } else if (m.model == "llama") {
    b = arch == "gemma" || arch == "gemma2" || arch == "gemma3" ? gemma_backend(m) : llama_backend(m);
  } else {
    m.fail("tokenizer.ggml.model", "tokenizer '" + m.model + "' is not supported (supported: gpt2, llama): build "
                                   "with --runtime none (no tokenizer files), or from a checkpoint directory");
  }
  if (const GgufValue* pre = file.find_key("tokenizer.ggml.pre"); pre && pre->type() == GgufValueType::STRING) {
    if (auto it = kPreTokenizerSplits.find(std::string(pre->as_string())); it != kPreTokenizerSplits.end())
      b.pre_tokenizer = {{"type", "Sequence"},
                         {"pretokenizers", {{{"type", "Split"}, {"pattern", {{"Regex", it->second}}},
                                             {"behavior", "Isolated"}, {"invert", false}},
                                            byte_level(false, false)}}};
  }
  const json bos = m.special_token("bos_token_id"), eos = m.special_token("eos_token_id");
  bool add_bos = m.flag("tokenizer.ggml.add_bos_token").value_or(m.model == "llama") && !bos.is_null();
  bool add_eos = m.flag("tokenizer.ggml.add_eos_token").value_or(false) && !eos.is_null();
  auto id_of = [&](const json& t, const char* key) {  // the vocabulary's id, as convert_tokens_to_ids
    if (t.is_null()) return int64_t{-1};
    auto it = b.vocab.id.find(t.get<std::string>());
    return it != b.vocab.id.end() ? it->second : *m.special_id(key);
  };

  GgufTokenizer out;
  json& t = out.tokenizer;
  t["version"] = "1.0";
  t["truncation"] = nullptr;
  t["padding"] = nullptr;
  t["added_tokens"] = added_tokens(m, b);
  t["normalizer"] = b.normalizer;
  t["pre_tokenizer"] = b.pre_tokenizer;
  t["post_processor"] = post_processor(add_bos, bos, id_of(bos, "bos_token_id"), add_eos, eos, id_of(eos, "eos_token_id"));
  t["decoder"] = b.decoder;
  t["model"] = std::move(b.model);

  json& c = out.tokenizer_config;
  c["add_bos_token"] = add_bos;
  c["add_eos_token"] = add_eos;
  c["bos_token"] = bos;
  c["eos_token"] = eos;
  c["unk_token"] = m.special_token("unknown_token_id");
  c["pad_token"] = m.special_token("padding_token_id");
  if (const GgufValue* ct = file.find_key("tokenizer.chat_template")) {
    if (ct->type() != GgufValueType::STRING)
      m.fail("tokenizer.chat_template", "expected a string, got " + gguf_value_type_name(ct->type()));
    if (!decode_utf8(ct->as_string())) m.fail("tokenizer.chat_template", "not UTF-8 text");
    c["chat_template"] = std::string(ct->as_string());
  }
  c["clean_up_tokenization_spaces"] = false;
  c["tokenizer_class"] = b.tokenizer_class;
  return out;
}

int write_gguf_tokenizer_files(const GgufFile& file, const std::string& out_dir) {
  std::optional<GgufTokenizer> tok = gguf_tokenizer(file);
  if (!tok) return 0;
  for (const auto& [name, doc] : {std::pair{"tokenizer.json", &tok->tokenizer},
                                  std::pair{"tokenizer_config.json", &tok->tokenizer_config}}) {
    const fs::path path = fs::path(out_dir) / name;
    std::ofstream f(path, std::ios::binary);
    f << doc->dump(2) << "\n";
    if (!f.flush()) throw Error(path.string() + ": cannot write");
  }
  return 2;
}

}  // namespace mobius
