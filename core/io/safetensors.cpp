#include "io/safetensors.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "io/atomic_file.h"

namespace nf {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors data is little-endian");

// The format's own limit on the header size; also protects us from absurd allocations.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

const std::pair<DType, const char*> kDTypeNames[] = {
    {DType::F64, "F64"}, {DType::F32, "F32"},   {DType::F16, "F16"}, {DType::BF16, "BF16"},
    {DType::I64, "I64"}, {DType::I32, "I32"},   {DType::I16, "I16"}, {DType::I8, "I8"},
    {DType::U8, "U8"},   {DType::BOOL, "BOOL"},
};

}  // namespace

std::string shapeString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::size_t dtypeSize(DType dtype) {
  switch (dtype) {
    case DType::F64:
    case DType::I64:
      return 8;
    case DType::F32:
    case DType::I32:
      return 4;
    case DType::F16:
    case DType::BF16:
    case DType::I16:
      return 2;
    case DType::I8:
    case DType::U8:
    case DType::BOOL:
      return 1;
  }
  return 0;
}

std::string dtypeName(DType dtype) {
  for (auto& [d, name] : kDTypeNames)
    if (d == dtype) return name;
  return "?";
}

std::optional<DType> parseDType(const std::string& name) {
  for (auto& [d, n] : kDTypeNames)
    if (name == n) return d;
  return std::nullopt;
}

int64_t TensorInfo::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  SafetensorsFile file;
  file.m_path = path;
  file.m_file = MappedFile::open(path);
  const uint64_t fileBytes = file.m_file.size();
  if (fileBytes < 8)
    throw FileError(
        path, "truncated: " + std::to_string(fileBytes) + " bytes, too short for the 8-byte header length");
  const std::byte* bytes = file.m_file.data();

  uint64_t headerBytes = 0;
  std::memcpy(&headerBytes, bytes, 8);
  if (headerBytes > kMaxHeaderBytes)
    throw FileError(path, "header length " + std::to_string(headerBytes) +
                              " is implausible (limit 100 MB); not a safetensors file?");
  if (8 + headerBytes > fileBytes)
    throw FileError(path, "truncated: header says " + std::to_string(headerBytes) +
                              " bytes of JSON but the file has " + std::to_string(fileBytes - 8) +
                              " after the length");
  file.m_data = bytes + 8 + headerBytes;
  const uint64_t dataBytes = fileBytes - 8 - headerBytes;

  nlohmann::json header;
  try {
    header = nlohmann::json::parse(reinterpret_cast<const char*>(bytes + 8),
                                   reinterpret_cast<const char*>(bytes + 8 + headerBytes));
  } catch (const nlohmann::json::exception& e) {
    throw FileError(path, std::string("header is not valid JSON: ") + e.what());
  }
  if (!header.is_object()) throw FileError(path, "header is not a JSON object");

  for (auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) throw FileError(path, "__metadata__ is not an object");
      for (auto& [k, v] : entry.items()) {
        if (!v.is_string()) throw FileError(path, "__metadata__ value '" + k + "' is not a string");
        file.m_metadata[k] = v.get<std::string>();
      }
      continue;
    }
    auto fail = [&, &name = name](const std::string& problem) {  // (clang 14 captures no structured binding)
      throw FileError(path, "tensor '" + name + "': " + problem);
    };
    if (!entry.is_object()) fail("entry is not an object");
    if (!entry.contains("dtype") || !entry["dtype"].is_string()) fail("missing dtype");
    if (!entry.contains("shape") || !entry["shape"].is_array()) fail("missing shape");
    if (!entry.contains("data_offsets") || !entry["data_offsets"].is_array() ||
        entry["data_offsets"].size() != 2)
      fail("missing or malformed data_offsets");
    TensorInfo info;
    info.name = name;
    auto dtype = parseDType(entry["dtype"].get<std::string>());
    if (!dtype) fail("unknown dtype '" + entry["dtype"].get<std::string>() + "'");
    info.dtype = *dtype;
    for (auto& d : entry["shape"]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0)
        fail("shape has a non-integer or negative dimension");
      info.shape.push_back(d.get<int64_t>());
    }
    for (auto& o : entry["data_offsets"])
      if (!o.is_number_unsigned()) fail("data_offsets are not non-negative integers");
    info.begin = entry["data_offsets"][0].get<uint64_t>();
    info.end = entry["data_offsets"][1].get<uint64_t>();
    if (info.begin > info.end || info.end > dataBytes)
      fail("data_offsets [" + std::to_string(info.begin) + ", " + std::to_string(info.end) +
           "] lie outside the data buffer of " + std::to_string(dataBytes) + " bytes (truncated file?)");
    // Computed without overflow: a shape like [2^40, 2^40] must not wrap to a small size.
    uint64_t expected = dtypeSize(info.dtype);
    for (int64_t d : info.shape)
      if (d != 0 && expected > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(d))
        fail("shape " + shapeString(info.shape) + " has more elements than any file can hold");
      else
        expected *= static_cast<uint64_t>(d);
    if (info.end - info.begin != expected)
      fail("holds " + std::to_string(info.end - info.begin) + " bytes but shape " + shapeString(info.shape) +
           " of " + dtypeName(info.dtype) + " needs " + std::to_string(expected));
    file.m_tensors.push_back(std::move(info));
  }

  // The tensors must tile the data area exactly: a gap or trailing bytes mean the header and the data
  // disagree (a header length a few bytes short still parses, and would shift every tensor).
  std::vector<const TensorInfo*> byOffset;
  for (auto& t : file.m_tensors) byOffset.push_back(&t);
  // By start, then end: an empty tensor at another's start comes first, overlapping nothing.
  std::sort(byOffset.begin(), byOffset.end(),
            [](auto* a, auto* b) { return a->begin != b->begin ? a->begin < b->begin : a->end < b->end; });
  uint64_t covered = 0;
  for (std::size_t i = 0; i < byOffset.size(); ++i) {
    const TensorInfo& t = *byOffset[i];
    if (t.begin < covered)
      throw FileError(path, "tensors '" + byOffset[i - 1]->name + "' and '" + t.name + "' overlap");
    if (t.begin > covered)
      throw FileError(path, "the data area has " + std::to_string(t.begin - covered) +
                                " unused bytes before tensor '" + t.name + "' (at offset " +
                                std::to_string(covered) +
                                "): the header does not describe this data (a wrong header length?)");
    covered = t.end;
  }
  if (covered != dataBytes)
    throw FileError(path, std::to_string(dataBytes - covered) +
                              " bytes after the last tensor (the data area has " + std::to_string(dataBytes) +
                              ", the tensors " + std::to_string(covered) +
                              "): the header does not describe this data (a wrong header length?)");
  return file;
}

const TensorInfo* SafetensorsFile::find(const std::string& name) const {
  for (auto& t : m_tensors)
    if (t.name == name) return &t;
  return nullptr;
}

uint64_t blobBytes(const TensorBlob& blob) {
  uint64_t n = 1;
  for (int64_t d : blob.shape) n *= static_cast<uint64_t>(d);
  return n * dtypeSize(blob.dtype);
}

void writeSafetensors(const std::string& path, const std::vector<TensorBlob>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (auto& t : tensors) {
    uint64_t bytes = blobBytes(t);
    header[t.name] = {
        {"dtype", dtypeName(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the spec allows trailing spaces
  const uint64_t headerBytes = text.size();

  AtomicFile out(path);
  out.write(&headerBytes, 8);
  out.write(text);
  for (auto& t : tensors) out.write(t.data, blobBytes(t));
  out.commit();
}

}  // namespace nf
