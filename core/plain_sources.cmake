# The engine's plain C++ sources (no torch), relative to core/: core/CMakeLists.txt builds them into nf_core,
# and tests/fuzz/CMakeLists.txt builds them again with sanitizers, without LibTorch.
set(NF_CORE_PLAIN_SOURCES
  io/atomic_file.cpp
  io/mapped_file.cpp
  io/safetensors.cpp
  io/file_format.cpp
  model/model_folder.cpp
  model/config.cpp
  model/family.cpp
  model/norm_state.cpp
  model/attention_kernel.cpp
  text/unicode.cpp
  text/pretokenizer.cpp
  text/tokenizer.cpp
  text/bpe_tokenizer.cpp
  text/bpe_trainer.cpp
  text/text_source.cpp
  data/synthetic_corpus.cpp
  data/corpus_grammar.cpp
  data/corpus_rules.cpp
  data/corpus_main_style.cpp
  data/corpus_alt_style.cpp
  data/ioi.cpp
  data/token_file.cpp
  data/tokenize.cpp
  data/token_sequences.cpp
  data/default_datasets.cpp
  schedule/schedule.cpp
  schedule/editable_schedule.cpp
  train/settings.cpp
  train/adamw_kernel.cpp
  train/memory_plan.cpp
  train/divergence.cpp
  run/run_directory.cpp
  run/run_lock.cpp
  run/source_model.cpp
  run/metrics_log.cpp
  analysis/analysis_request.cpp
  distributed/worker_environment.cpp
  analysis/analysis_header.cpp
  util/allocator.cpp
  util/child_process.cpp
  util/blas_threads.cpp
)
# tokenizer.json and tokenizer.model (NF_TOKENIZER_FORMATS, top-level CMakeLists.txt).
set(NF_CORE_TOKENIZER_SOURCES text/regex.cpp text/hf_tokenizer.cpp text/sentencepiece_tokenizer.cpp)
