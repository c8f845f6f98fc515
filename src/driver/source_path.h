// The source a build or `mobius info` reads, as given on the command line: a checkpoint directory,
// a Hugging Face model id (`--config Qwen/Qwen2.5-0.5B` reads the checkpoint that huggingface_hub
// downloaded into its local cache; no network access), or a .gguf file.
#pragma once

#include <string>

namespace mobius {

// The hub cache directory as huggingface_hub computes it (huggingface_hub/constants.py):
// $HF_HUB_CACHE, else $HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub, else
// ${XDG_CACHE_HOME:-~/.cache}/huggingface/hub.
std::string hf_hub_cache_dir();

// A --config argument: an existing directory is returned as it is; otherwise an argument spelled
// as a model id (ORG/NAME: letters, digits, '.', '_', '-') is the snapshot that the cache's
// refs/main names: <cache>/models--ORG--NAME/snapshots/<refs/main>/ (huggingface_hub's cache
// layout, file_download.py). refs/main is read as untrusted input (util/input_files.h: a regular
// file of at most 1 KiB) and must be a revision name (no '/', no '..'), and the snapshot must
// resolve inside the repository's snapshots/. Throws mobius::Error: "not a directory" for anything
// else; for an id that is not in the cache, the directory looked in and the command that
// downloads it (`hf download ORG/NAME`); a refs/main that is not a revision or leads outside.
std::string resolve_checkpoint_dir(const std::string& arg);

// `arg` (a command-line argument) as a message shows it: escaped, and cut to its first 128 bytes
// and its length when longer than 256.
std::string shown_argument(const std::string& arg);

// How a source argument (positional, --config or --gguf: synonyms) is read. `gguf` is true for a
// GGUF file: a regular file that starts with the magic "GGUF", or a name ending ".gguf" that is not
// a directory (a missing one is then reported by the GGUF reader). `path` is what to read: the GGUF
// file, or a checkpoint directory / Hugging Face id for resolve_checkpoint_dir; a config.json file
// given as the source stands for its directory. Throws mobius::Error naming `arg`: another regular
// file ("neither a GGUF file nor a checkpoint directory"); a directory without config.json that
// holds .gguf files (names one: "pass the .gguf file").
struct SourceArg {
  std::string path;
  bool gguf = false;
};
SourceArg classify_source(const std::string& arg);

}  // namespace mobius
