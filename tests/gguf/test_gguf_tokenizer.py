"""The tokenizer files of a `mobius build --gguf` package against transformers' GGUF tokenizer.

Tiny GGUF tokenizers, one per builder of transformers/integrations/gguf/gguf_tokenizer_mapping.py
that mobius synthesizes (byte-level BPE with the default and a regex pre-tokenizer, LlamaTokenizer
sentencepiece with merges derived from scores, GemmaTokenizer with merges derived from token
positions), their vocabularies and merges trained by the `tokenizers` library on a few sentences,
with control, user-defined and byte tokens, written into a tiny model's GGUF. For each, on a corpus
of prompts (ASCII, unicode, digits, whitespace runs, code, special tokens):
- transformers' tokenizer loaded from the package (AutoTokenizer on the package directory) and
  onnxruntime-genai's own tokenizer (og.Tokenizer with add_special_tokens, as transformers adds
  them) give the ids of transformers' GGUF tokenizer (AutoTokenizer.from_pretrained(gguf_file=...));
- the package's tokenizer.json equals the one transformers builds from the file;
- a tokenizer that adds <bos> gets the build's warning that onnxruntime-genai's default encode()
  leaves it out (and it does), the others none.
"""

import json

import gguf
import pytest
from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers
from transformers import AutoTokenizer

import harness as H
from gguf_testlib import TOKENIZER_CORPUS as CORPUS, genai_tokenizer, write_gguf

TRAIN = [
    "The quick brown fox jumps over the lazy dog. The dog sleeps; the fox runs.",
    "def square(x):\n    return x * x  # the square of x\n\nprint(square(12345))",
    "Hello world! Hello there, hello again. 1234567890 3.14159 -42 100%",
    "Unicode: café naïve résumé 日本語 中文 Ελληνικά русский язык 😀 🚀",
    "    indented\tlines\n\n\nand   runs   of   spaces",
]
CONTROL, USER_DEFINED, BYTE = 3, 4, 6


def trained(pre_tokenizer, vocab_size, specials):
    """(tokens in id order, merges) of a BPE trained on TRAIN with `pre_tokenizer`."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizer
    alphabet = pre_tokenizers.ByteLevel.alphabet() if isinstance(pre_tokenizer, pre_tokenizers.ByteLevel) else []
    tok.train_from_iterator(TRAIN * 10, trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials,
                                                           initial_alphabet=alphabet, show_progress=False))
    model = json.loads(tok.to_str())["model"]
    tokens = sorted(model["vocab"], key=model["vocab"].get)
    return tokens, [" ".join(m) for m in model["merges"]]


def gpt2_tokenizer(pre: str, add_bos: bool):
    """A byte-level vocabulary as llama.cpp writes it: control tokens first, one spelled outside the
    byte alphabet (transformers skips it as an added token), a user-defined <think> and a token
    in plain UTF-8 (respelled in the byte alphabet by the loader)."""
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|日|>"]
    tokens, merges = trained(pre_tokenizers.ByteLevel(add_prefix_space=False), 420, specials)
    tokens += ["<think>", "</think>", "日本"]
    types = [CONTROL if t in specials else USER_DEFINED if t in ("<think>", "</think>") else 1 for t in tokens]

    def write(w: gguf.GGUFWriter):
        w.add_tokenizer_model("gpt2")
        w.add_tokenizer_pre(pre)
        w.add_token_list(tokens)
        w.add_token_types(types)
        w.add_token_merges(merges)
        w.add_bos_token_id(1)
        w.add_eos_token_id(2)
        w.add_unk_token_id(0)
        w.add_pad_token_id(2)
        w.add_add_bos_token(add_bos)
        w.add_chat_template("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}")
    return len(tokens), write


def sentencepiece_tokens(specials):
    """Control tokens, the 256 byte-fallback tokens, then pieces trained with U+2581 for spaces."""
    # as sentencepiece trains: pieces within words (a leading U+2581), digits and newlines alone
    spm = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(r"[\n\t]"), "isolated"),
                                   pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first", split=True),
                                   pre_tokenizers.Digits(individual_digits=True)])
    pieces, _ = trained(spm, 450, [])
    byte_tokens = [f"<0x{b:02X}>" for b in range(256)]
    tokens = specials + byte_tokens + [p for p in pieces if p not in specials and p not in byte_tokens]
    types = [CONTROL if t in specials else BYTE if t in byte_tokens else 1 for t in tokens]
    return tokens, types


def llama_tokenizer():
    """LlamaTokenizer: merges come from the scores (ties included: the sort must be stable)."""
    tokens, types = sentencepiece_tokens(["<unk>", "<s>", "</s>"])
    tokens.append("<think>")
    types.append(USER_DEFINED)
    scores = [-float(i // 3) for i in range(len(tokens))]

    def write(w: gguf.GGUFWriter):
        w.add_tokenizer_model("llama")
        w.add_tokenizer_pre("default")
        w.add_token_list(tokens)
        w.add_token_types(types)
        w.add_token_scores(scores)
        w.add_bos_token_id(1)
        w.add_eos_token_id(2)
        w.add_unk_token_id(0)
        # no add_bos_token key: a "llama" tokenizer adds <s> by default
    return len(tokens), write


def gemma_tokenizer():
    """GemmaTokenizer: all-whitespace tokens with a space stored as real spaces, merges by position."""
    tokens, types = sentencepiece_tokens(["<pad>", "<eos>", "<bos>", "<unk>", "<mask>", "<start_of_turn>",
                                          "<end_of_turn>"])
    tokens += ["  ", "   ", "\n\n", "\t\t", "<think>"]
    types += [USER_DEFINED] * 5
    scores = [0.0] * len(tokens)  # Gemma's scores do not follow its merge order: positions do

    def write(w: gguf.GGUFWriter):
        w.add_tokenizer_model("llama")
        w.add_tokenizer_pre("default")
        w.add_token_list(tokens)
        w.add_token_types(types)
        w.add_token_scores(scores)
        w.add_bos_token_id(2)
        w.add_eos_token_id(1)
        w.add_unk_token_id(3)
        w.add_pad_token_id(0)
        w.add_add_bos_token(True)
        w.add_add_eos_token(False)
    return len(tokens), write


VARIANTS = {
    "gpt2-bytelevel": ("llama", lambda: gpt2_tokenizer("smollm", add_bos=False)),
    "gpt2-llama3-regex-bos": ("llama", lambda: gpt2_tokenizer("llama-bpe", add_bos=True)),
    "llama-sentencepiece": ("llama", llama_tokenizer),
    "gemma3-sentencepiece": ("gemma3_text", gemma_tokenizer),
}


@pytest.mark.parametrize("name", list(VARIANTS))
def test_package_tokenizer_gives_transformers_gguf_ids(tmp_path, name):
    model_type, make = VARIANTS[name]
    vocab_size, write_tokenizer = make()
    model = H.write_checkpoint(model_type, {"vocab_size": vocab_size}, tmp_path / "hf")
    path = tmp_path / "model.gguf"
    write_gguf(model, path, tokenizer=write_tokenizer)
    r = H.run_mobius("build", "--gguf", path, tmp_path / "pkg")
    assert r.returncode == 0, r.stderr
    pkg = tmp_path / "pkg"

    ref = AutoTokenizer.from_pretrained(tmp_path, gguf_file=path.name)
    assert json.loads((pkg / "tokenizer.json").read_text()) == json.loads(ref.backend_tokenizer.to_str())
    config = json.loads((pkg / "tokenizer_config.json").read_text())
    assert config["add_bos_token"] == ref.add_bos_token and config["add_eos_token"] == ref.add_eos_token
    assert config.get("chat_template") == ref.chat_template
    assert config["tokenizer_class"] == type(ref).__name__  # what transformers' save_pretrained writes

    from_package = AutoTokenizer.from_pretrained(pkg)
    _, genai = genai_tokenizer(pkg)
    for prompt in CORPUS:
        want = ref(prompt)["input_ids"]
        assert from_package(prompt)["input_ids"] == want, prompt
        if name == "llama-sentencepiece" and genai_prepends_differently(prompt):
            continue
        assert [int(t) for t in genai.encode(prompt)] == want, prompt
    # onnxruntime-genai's encode() as its examples call it (no update_options) leaves out the
    # <bos> the tokenizer adds: the build warns exactly then, and what the warning says holds
    import onnxruntime_genai as og

    warned = [line for line in r.stderr.splitlines() if "onnxruntime-genai's tokenizer.encode()" in line]
    assert len(warned) == int(bool(ref.add_bos_token)), r.stderr
    plain = [int(t) for t in og.Tokenizer(og.Model(str(pkg))).encode("Hello world")]
    want = ref("Hello world")["input_ids"]
    if ref.add_bos_token:
        assert want[0] == ref.bos_token_id and plain == want[1:], (plain, want)
        assert warned[0].startswith(f"mobius: warning: the tokenizer adds {ref.bos_token} to every text"), warned
        assert 'tokenizer.update_options(add_special_tokens="true")' in warned[0]
    else:
        assert plain == want


def genai_prepends_differently(prompt: str) -> bool:
    """onnxruntime-genai 0.18's sentencepiece BPE (a tokenizer.json whose decoder strips the
    prefix space, i.e. transformers' LlamaTokenizer) prepends U+2581 to text that already starts
    with a space and to the text after a leading added token, where transformers' Metaspace
    (prepend_scheme "first") does not: on such prompts genai's ids differ from transformers' for
    any LlamaTokenizer package, the ORT GenAI model builder's included. The package's tokenizer.json
    is transformers' own (asserted above); genai is checked on every other prompt."""
    return prompt.startswith(" ") or prompt.startswith("<")


def test_unsupported_tokenizer_model_is_one_line_error(tmp_path):
    model = H.write_checkpoint("llama", {"vocab_size": 8}, tmp_path / "hf")
    path = tmp_path / "model.gguf"

    def write(w: gguf.GGUFWriter):
        w.add_tokenizer_model("t5")
        w.add_token_list([f"<t{i}>" for i in range(8)])
    write_gguf(model, path, tokenizer=write)
    r = H.run_mobius("build", "--gguf", path, tmp_path / "pkg")
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("mobius: error: "), r.stderr
    assert "tokenizer.ggml.model" in r.stderr and "'t5'" in r.stderr, r.stderr
    assert not (tmp_path / "pkg").exists()
