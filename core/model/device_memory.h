// How much memory a device has: the planner's input (train/memory_plan.h). Plain C++, so the CLI and the
// GUI can ask without torch.
#pragma once
#include <cstdint>
#include <string>

namespace nf {

struct DeviceMemory {
  int64_t freeBytes = 0, totalBytes = 0;
};

// "cpu" → the machine's available and total RAM; "cuda", "cuda:N" → that GPU's free and total memory
// (cudaMemGetInfo). Throws std::invalid_argument for a device this build cannot use.
DeviceMemory deviceMemory(const std::string& device);

// The GPUs this build can train on (0 without CUDA): the run setup's default number of workers.
int cudaDeviceCount();

// The most memory the caching allocator of a CUDA device has held since the last reset, and the reset;
// 0 and nothing on the CPU. For checking the planner's predictions against measured peaks.
int64_t peakDeviceMemory(const std::string& device);
void resetPeakDeviceMemory(const std::string& device);

}  // namespace nf
