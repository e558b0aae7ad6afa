// Our own reader and writer for the safetensors format (no torch here):
// 8 bytes little-endian header length N, N bytes of JSON header, then the raw tensor bytes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "io/mapped_file.h"

namespace nf {

enum class DType { F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL };

std::size_t dtypeSize(DType dtype);
std::string dtypeName(DType dtype);
std::optional<DType> parseDType(const std::string& name);
std::string shapeString(const std::vector<int64_t>& shape);  // "[2, 3]", for messages

struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // byte range inside the data buffer
  int64_t numel() const;
};

// A memory-mapped, fully validated safetensors file. Opening it checks the header, every dtype,
// that every range lies in the buffer, matches its shape and overlaps no other; errors name the
// file and the tensor.
class SafetensorsFile {
 public:
  static SafetensorsFile open(const std::string& path);

  const std::string& path() const { return m_path; }
  const std::vector<TensorInfo>& tensors() const { return m_tensors; }
  const std::map<std::string, std::string>& metadata() const { return m_metadata; }
  const TensorInfo* find(const std::string& name) const;
  const std::byte* data(const TensorInfo& info) const { return m_data + info.begin; }

 private:
  SafetensorsFile() = default;
  std::string m_path;
  std::vector<TensorInfo> m_tensors;
  std::map<std::string, std::string> m_metadata;
  MappedFile m_file;
  const std::byte* m_data = nullptr;
};

// One tensor to write: bytes are borrowed and must hold numel × dtypeSize bytes.
struct TensorBlob {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const void* data = nullptr;
};

// Writes atomically; the header is padded to a multiple of 8 bytes so tensors stay aligned.
void writeSafetensors(const std::string& path, const std::vector<TensorBlob>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

// Bytes a set of blobs takes on disk (for sharding).
uint64_t blobBytes(const TensorBlob& blob);

}  // namespace nf
