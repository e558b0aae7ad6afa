// Precompiled header for every core/test/CLI translation unit that uses LibTorch.
#pragma once
#include <torch/torch.h>

#include <nlohmann/json.hpp>
