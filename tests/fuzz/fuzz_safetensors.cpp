// safetensors (io/safetensors.h): the 8-byte header length, the JSON header, the tensors' byte ranges. The
// reader memory-maps a path, so each input is written to a file in /dev/shm first; every byte of every
// tensor it accepts is then read, as loading a model would.
#include "fuzz_support.h"
#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = nf::fuzz::writeInput("model.safetensors", nf::fuzz::asText(data, size));
  nf::fuzz::expectOnlyParseErrors([&] {
    const nf::SafetensorsFile file = nf::SafetensorsFile::open(path);
    for (const nf::TensorInfo& info : file.tensors()) {
      nf::fuzz::require(file.find(info.name) != nullptr, "an accepted tensor is not found by its name");
      nf::fuzz::touch(file.data(info), info.end - info.begin);
      nf::fuzz::keep(nf::shapeString(info.shape).size());
    }
    for (const auto& [key, value] : file.metadata()) nf::fuzz::touch(value.data(), value.size());
  });
  return 0;
}
