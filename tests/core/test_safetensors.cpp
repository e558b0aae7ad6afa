// Our safetensors reader and writer: round trips, and every malformed file rejected with a message that
// names the file and the tensor.
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <fstream>

#include "fixtures.h"
#include "io/atomic_file.h"
#include "io/safetensors.h"

using namespace nf;
using namespace nf::test;

namespace {

// Writes a file by hand: 8-byte length, the given header text, then `dataBytes` bytes.
std::string rawFile(const TempDir& dir, const std::string& header, std::size_t dataBytes,
                    const std::string& name = "x.safetensors") {
  const std::string path = dir.path(name);
  std::ofstream out(path, std::ios::binary);
  uint64_t n = header.size();
  out.write(reinterpret_cast<const char*>(&n), 8);
  out << header;
  out << std::string(dataBytes, '\0');
  return path;
}

}  // namespace

TEST_CASE(round_trip_keeps_names_dtypes_shapes_and_bytes) {
  TempDir dir;
  std::vector<float> a = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, 1e-8f};
  std::vector<int64_t> b = {1, -2, 1LL << 40};
  std::vector<uint16_t> h = {0x3c00, 0xc000};  // F16 1.0, -2.0
  const std::string path = dir.path("t.safetensors");
  writeSafetensors(path,
                   {{"a", DType::F32, {2, 3}, a.data()},
                    {"b", DType::I64, {3}, b.data()},
                    {"h", DType::F16, {2}, h.data()}},
                   {{"format", "pt"}});
  auto f = SafetensorsFile::open(path);
  REQUIRE_EQ(f.tensors().size(), 3u);
  REQUIRE_EQ(f.metadata().at("format"), "pt");
  const TensorInfo* ta = f.find("a");
  REQUIRE(ta && ta->dtype == DType::F32 && ta->shape == std::vector<int64_t>({2, 3}));
  REQUIRE(std::memcmp(f.data(*ta), a.data(), a.size() * 4) == 0);
  const TensorInfo* tb = f.find("b");
  REQUIRE(tb && tb->dtype == DType::I64 && std::memcmp(f.data(*tb), b.data(), 24) == 0);
  REQUIRE(f.find("h")->dtype == DType::F16);
  // Data starts 8-byte aligned so tensors can be read in place.
  std::ifstream in(path, std::ios::binary);
  uint64_t n = 0;
  in.read(reinterpret_cast<char*>(&n), 8);
  REQUIRE_EQ(n % 8, 0u);
}

TEST_CASE(file_readable_by_the_python_reference_parser) {
  // The same bytes parsed by an independent reader (tests/reference/gpt2_reference.py's parser).
  TempDir dir;
  std::vector<float> a = {1, 2, 3, 4};
  writeSafetensors(dir.path("t.safetensors"), {{"w", DType::F32, {2, 2}, a.data()}});
  const std::string cmd = std::string(NF_REFERENCE_PYTHON) + " -c \"import sys; sys.path.insert(0, '" +
                          NF_REFERENCE_DIR + "'); from gpt2_reference import read_safetensors as r; t = r('" +
                          dir.path("t.safetensors") +
                          "')['w']; sys.exit(0 if t.tolist() == [[1, 2], [3, 4]] else 1)\"";
  REQUIRE_EQ(runCommand(cmd), 0);
}

TEST_CASE(file_shorter_than_the_length_prefix_is_truncated) {
  TempDir dir;
  std::ofstream(dir.path("x.safetensors")) << "abc";
  REQUIRE_THROWS_WITH(SafetensorsFile::open(dir.path("x.safetensors")), "x.safetensors", "truncated");
}

TEST_CASE(header_longer_than_file_is_truncated) {
  TempDir dir;
  const std::string path = dir.path("x.safetensors");
  {
    std::ofstream out(path, std::ios::binary);
    uint64_t n = 1000;
    out.write(reinterpret_cast<const char*>(&n), 8);
    out << "{}";
  }
  REQUIRE_THROWS_WITH(SafetensorsFile::open(path), "x.safetensors", "truncated", "1000");
}

TEST_CASE(invalid_json_header_is_rejected) {
  TempDir dir;
  REQUIRE_THROWS_WITH(SafetensorsFile::open(rawFile(dir, "{\"a\": [", 0)), "x.safetensors", "not valid JSON");
}

TEST_CASE(truncated_data_is_rejected_naming_the_tensor) {
  TempDir dir;
  auto path = rawFile(dir, R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 10);
  REQUIRE_THROWS_WITH(SafetensorsFile::open(path), "x.safetensors", "tensor 'w'", "outside the data buffer");
}

TEST_CASE(bad_offsets_are_rejected) {
  TempDir dir;
  auto path = rawFile(dir, R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})", 16);
  REQUIRE_THROWS_WITH(SafetensorsFile::open(path), "tensor 'w'", "data_offsets [8, 4]");
  path = rawFile(dir, R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}})", 16, "y.safetensors");
  REQUIRE_THROWS_WITH(SafetensorsFile::open(path), "y.safetensors", "tensor 'w'", "data_offsets");
}

TEST_CASE(overlapping_ranges_are_rejected) {
  TempDir dir;
  auto path = rawFile(
      dir,
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
      12);
  REQUIRE_THROWS_WITH(SafetensorsFile::open(path), "x.safetensors", "'a' and 'b' overlap");
}

// An empty tensor takes no bytes: where it starts at another's offset it overlaps nothing (the reference
// library orders by start, then end). It had been refused as an overlap, depending on the header's order.
TEST_CASE(an_empty_tensor_at_another_tensors_offset_is_valid) {
  TempDir dir;
  auto path = rawFile(
      dir,
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[3],"data_offsets":[8,20]},)"
      R"("c_empty":{"dtype":"F32","shape":[0],"data_offsets":[8,8]}})",
      20);
  const auto file = SafetensorsFile::open(path);
  REQUIRE(file.find("c_empty") != nullptr && file.find("b") != nullptr);
}

TEST_CASE(unknown_dtype_is_rejected) {
  TempDir dir;
  auto path = rawFile(dir, R"({"w":{"dtype":"Q4","shape":[2],"data_offsets":[0,2]}})", 2);
  REQUIRE_THROWS_WITH(SafetensorsFile::open(path), "x.safetensors", "tensor 'w'", "unknown dtype 'Q4'");
}

TEST_CASE(shape_that_disagrees_with_byte_length_is_rejected) {
  TempDir dir;
  auto path = rawFile(dir, R"({"w":{"dtype":"F16","shape":[3,2],"data_offsets":[0,8]}})", 8);
  REQUIRE_THROWS_WITH(SafetensorsFile::open(path), "tensor 'w'", "holds 8 bytes", "[3, 2]", "needs 12");
}

TEST_CASE(missing_fields_are_rejected) {
  TempDir dir;
  REQUIRE_THROWS_WITH(SafetensorsFile::open(rawFile(dir, R"({"w":{"shape":[1],"data_offsets":[0,4]}})", 4)),
                      "tensor 'w'", "missing dtype");
  REQUIRE_THROWS_WITH(SafetensorsFile::open(rawFile(dir, R"({"w":{"dtype":"F32","data_offsets":[0,4]}})", 4)),
                      "missing shape");
  REQUIRE_THROWS_WITH(SafetensorsFile::open(rawFile(dir, R"({"w":{"dtype":"F32","shape":[1]}})", 4)),
                      "data_offsets");
}

TEST_CASE(missing_file_is_named) {
  REQUIRE_THROWS_WITH(SafetensorsFile::open("/nonexistent/model.safetensors"),
                      "/nonexistent/model.safetensors", "cannot open");
}

TEST_CASE(failed_atomic_write_keeps_the_old_file) {
  TempDir dir;
  const std::string path = dir.path("keep.txt");
  writeFileAtomic(path, "good");
  {
    AtomicFile f(path);
    f.write("half-writ");
    // destroyed without commit: as if the process failed mid-write
  }
  REQUIRE_EQ(readTextFile(path), "good");
  REQUIRE(std::distance(std::filesystem::directory_iterator(dir.path()), {}) ==
          1);  // no temporary left behind
  {
    AtomicFile f(path);
    f.write("synced, never renamed");
    f.sync();  // on disk; then the process fails before commit (a token file's sidecar could not be written)
    REQUIRE_THROWS_WITH(f.write("more"), "write after sync");
  }
  REQUIRE_EQ(readTextFile(path), "good");
  REQUIRE(std::distance(std::filesystem::directory_iterator(dir.path()), {}) == 1);
  AtomicFile f(path);
  f.write("new");
  f.sync();
  f.commit();  // the rename alone is left after sync
  REQUIRE_EQ(readTextFile(path), "new");
  REQUIRE_THROWS_WITH(f.commit(), "commit twice");
}

TEST_CASE(an_output_in_a_missing_folder_is_named_as_such) {
  TempDir dir;  // "cannot create temporary file" had sent users looking for a temporary they never named
  REQUIRE_THROWS_WITH(writeFileAtomic(dir.path("not-made/out.json"), "{}"), dir.path("not-made/out.json"),
                      "its folder does not exist");
}

// A model folder is several files, and readers take one with config.json as whole: it is replaced and
// removed by renames, never file by file under its own name.
TEST_CASE(a_folder_is_replaced_and_removed_whole) {
  TempDir dir;
  const std::string to = dir.path("final"), tmp = dir.path("final.tmp-1");
  std::filesystem::create_directories(to);
  writeFileAtomic(to + "/config.json", "old");
  writeFileAtomic(to + "/merges.txt", "old merges");
  std::filesystem::create_directories(tmp);
  writeFileAtomic(tmp + "/config.json", "new");
  replaceFolder(tmp, to);
  REQUIRE_EQ(readTextFile(to + "/config.json"), "new");
  REQUIRE(!std::filesystem::exists(to + "/merges.txt"));  // nothing of the old one mixed in
  REQUIRE(std::distance(std::filesystem::directory_iterator(dir.path()), {}) == 1);
  REQUIRE_THROWS_WITH(replaceFolder(dir.path("never-written"), to), "final", "could not be replaced");
  REQUIRE_EQ(readTextFile(to + "/config.json"), "new");  // a failed replacement keeps what was there
  removeFolder(to);
  REQUIRE(std::filesystem::is_empty(dir.path()));
  REQUIRE_THROWS_WITH(removeFolder(to), "final", "could not be removed");
}

// An export's two folders: never a new folded/ beside an old standard/, and a failure keeps both old.
TEST_CASE(folders_are_replaced_as_one) {
  TempDir dir;
  for (const char* form : {"folded", "standard"}) {
    std::filesystem::create_directories(dir.path(form));
    writeFileAtomic(dir.path(form) + "/config.json", "old");
    std::filesystem::create_directories(dir.path(form) + ".tmp-1");
    writeFileAtomic(dir.path(form) + ".tmp-1/config.json", "new");
  }
  REQUIRE_THROWS_WITH(replaceFolders({{dir.path("folded.tmp-1"), dir.path("folded")},
                                      {dir.path("missing.tmp-1"), dir.path("standard")}}),
                      "standard", "could not be replaced");
  REQUIRE_EQ(readTextFile(dir.path("folded/config.json")), "old");
  REQUIRE_EQ(readTextFile(dir.path("standard/config.json")), "old");
  // A failure while renaming in (the second's folder is gone): the first is taken out again, the old back.
  REQUIRE_THROWS_WITH(replaceFolders({{dir.path("folded.tmp-1"), dir.path("folded")},
                                      {dir.path("standard.tmp-1"), dir.path("gone/standard")}}),
                      "gone/standard", "could not be replaced");
  REQUIRE_EQ(readTextFile(dir.path("folded/config.json")), "old");
  REQUIRE_EQ(readTextFile(dir.path("folded.tmp-1/config.json")), "new");
  replaceFolders(
      {{dir.path("folded.tmp-1"), dir.path("folded")}, {dir.path("standard.tmp-1"), dir.path("standard")}});
  REQUIRE_EQ(readTextFile(dir.path("folded/config.json")), "new");
  REQUIRE_EQ(readTextFile(dir.path("standard/config.json")), "new");
  REQUIRE(std::distance(std::filesystem::directory_iterator(dir.path()), {}) == 2);
}

// A file holding a secret (serve.json's token) is its owner's alone, also when a link or a world-readable
// leftover already sits where the temporary goes: neither is followed or reused.
TEST_CASE(an_owner_only_file_is_never_written_through_a_planted_temporary) {
  TempDir dir;
  const std::string path = dir.path("secret.json"), elsewhere = dir.path("elsewhere.txt");
  writeFileAtomic(elsewhere, "untouched");
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  std::filesystem::create_symlink(elsewhere, tmp);
  writeFileAtomic(path, "token", FileAccess::OwnerOnly);
  REQUIRE_EQ(readTextFile(path), "token");
  REQUIRE_EQ(readTextFile(elsewhere), "untouched");
  REQUIRE(std::filesystem::status(path).permissions() ==
          (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
  writeFileAtomic(tmp, "a world-readable leftover");
  writeFileAtomic(path, "token 2", FileAccess::OwnerOnly);
  REQUIRE_EQ(readTextFile(path), "token 2");
  REQUIRE(std::filesystem::status(path).permissions() ==
          (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
}

TEST_CASE(full_disk_is_reported_with_the_file_name_and_loses_nothing) {
  // A file-size limit makes write() fail part-way, as a full disk does (EFBIG instead of ENOSPC).
  TempDir dir;
  const std::string path = dir.path("w.safetensors");
  std::vector<float> small(4, 2.0f), big(1 << 20, 1.0f);
  writeSafetensors(path, {{"w", DType::F32, {4}, small.data()}});
  std::signal(SIGXFSZ, SIG_IGN);
  rlimit old{};
  ::getrlimit(RLIMIT_FSIZE, &old);
  rlimit limited = old;
  limited.rlim_cur = 64 * 1024;
  ::setrlimit(RLIMIT_FSIZE, &limited);
  bool threw = false;
  std::string message;
  try {
    writeSafetensors(path, {{"w", DType::F32, {1 << 20}, big.data()}});
  } catch (const FileError& e) {
    threw = true;
    message = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  REQUIRE(threw);
  REQUIRE_MSG(message.find(path) != std::string::npos && message.find("write failed") != std::string::npos,
              message);
  auto f = SafetensorsFile::open(path);  // the previous file is intact
  REQUIRE(f.find("w")->shape == std::vector<int64_t>({4}));
  REQUIRE(std::distance(std::filesystem::directory_iterator(dir.path()), {}) == 1);
}

TEST_MAIN()
