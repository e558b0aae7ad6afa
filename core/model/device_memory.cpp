#include "model/device_memory.h"

#include <torch/torch.h>

#include <fstream>
#include <stdexcept>

#ifdef NF_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>
#endif

namespace nf {
namespace {

// /proc/meminfo's value for `key`, in bytes (0 when missing).
int64_t meminfoBytes(const std::string& key) {
  std::ifstream in("/proc/meminfo");
  for (std::string name; in >> name;) {
    int64_t kib = 0;
    std::string unit;
    in >> kib >> unit;
    if (name == key + ":") return kib * 1024;
  }
  return 0;
}

// The device, with its caching allocator set up (its statistics refuse a device before the first allocation).
torch::Device cudaDevice(const std::string& name) {
  torch::Device d(name);
  if (!d.is_cuda()) throw std::invalid_argument("'" + name + "' is not a CUDA device");
  if (!torch::cuda::is_available())
    throw std::invalid_argument("device '" + name + "': this build of LibTorch has no CUDA or sees no GPU");
  if (!d.has_index()) d.set_index(0);
  torch::empty({1}, torch::TensorOptions().device(d));
  return d;
}

}  // namespace

int cudaDeviceCount() {
  return torch::cuda::is_available() ? static_cast<int>(torch::cuda::device_count()) : 0;
}

DeviceMemory deviceMemory(const std::string& name) {
  if (torch::Device(name).is_cpu()) return {meminfoBytes("MemAvailable"), meminfoBytes("MemTotal")};
  const torch::Device d = cudaDevice(name);
#ifdef NF_WITH_CUDA
  c10::cuda::CUDAGuard guard(d.index());
  size_t freeBytes = 0, totalBytes = 0;
  if (cudaMemGetInfo(&freeBytes, &totalBytes) != cudaSuccess)
    throw std::runtime_error("device '" + name + "': cudaMemGetInfo failed");
  return {static_cast<int64_t>(freeBytes), static_cast<int64_t>(totalBytes)};
#else
  (void)d;
  throw std::invalid_argument("device '" + name + "': this build has no CUDA");
#endif
}

int64_t peakDeviceMemory(const std::string& name) {
  if (torch::Device(name).is_cpu()) return 0;
#ifdef NF_WITH_CUDA
  const torch::Device d = cudaDevice(name);
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(d.index());
  return stats.allocated_bytes[0].peak;  // [0]: all pools together
#else
  return 0;
#endif
}

void resetPeakDeviceMemory(const std::string& name) {
  if (torch::Device(name).is_cpu()) return;
#ifdef NF_WITH_CUDA
  const torch::Device d = cudaDevice(name);
  c10::cuda::CUDACachingAllocator::resetPeakStats(d.index());
#endif
}

}  // namespace nf
