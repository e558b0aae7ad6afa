#include "model/attention_kernel.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "util/vector_math.h"

namespace nf::attention_kernel {

namespace {

// The vector type below is only ever passed inside inlined code, so GCC's note that its ABI differs
// between instruction sets does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

// Eight floats as one value (GCC's vector extension): the products below keep their accumulators in
// registers as these, which plain float arrays did not (the compiler spilled them to the stack).
typedef float Vec __attribute__((vector_size(32)));
typedef float UnalignedVec __attribute__((vector_size(32), aligned(4)));
constexpr int kLanes = 8;
[[gnu::always_inline]] inline Vec load(const float* p) { return *reinterpret_cast<const UnalignedVec*>(p); }
[[gnu::always_inline]] inline void store(float* p, Vec v) { *reinterpret_cast<UnalignedVec*>(p) = v; }

// Score blocks: 4 queries × 16 keys. T is padded to kBlock so that every block lies inside the buffers;
// padded rows and columns hold zeros.
constexpr int64_t kBlock = 16;
constexpr int kQueryBlock = 4;

// Everything inlines into the two entry points below, which are compiled once per instruction set.
#define NF_INLINE [[gnu::always_inline]] inline

// c[i][j] = Σ_d a[i][d]·bT[d][j] for the blocks on or below the diagonal (j ≤ i up to the block's end);
// a [Tp × DH], bT [DH × Tp], c [Tp × Tp]. Blocks above the diagonal are left unwritten.
template <int DH>
NF_INLINE void lowerScores(const float* a, const float* bT, float* c, int64_t Tp) {
  constexpr int kVecs = kBlock / kLanes;
  for (int64_t i = 0; i < Tp; i += kQueryBlock)
    for (int64_t j = 0; j < i + kQueryBlock; j += kBlock) {
      Vec acc[kQueryBlock][kVecs] = {};
      for (int d = 0; d < DH; ++d) {
        const float* b = bT + d * Tp + j;
        Vec column[kVecs];
#pragma GCC unroll 4
        for (int l = 0; l < kVecs; ++l) column[l] = load(b + l * kLanes);
#pragma GCC unroll 4
        for (int r = 0; r < kQueryBlock; ++r) {
          const float x = a[(i + r) * DH + d];
#pragma GCC unroll 4
          for (int l = 0; l < kVecs; ++l) acc[r][l] += x * column[l];
        }
      }
#pragma GCC unroll 4
      for (int r = 0; r < kQueryBlock; ++r)
#pragma GCC unroll 4
        for (int l = 0; l < kVecs; ++l) store(c + (i + r) * Tp + j + l * kLanes, acc[r][l]);
    }
}

// How many output rows the products below accumulate at once: 8 vectors of accumulators.
constexpr int rowsPerBlock(int dh) { return dh >= 64 ? 1 : 64 / dh; }

// c[i] = alpha·Σ_{j ≤ i} l[i][j]·r[j] (rows of DH); l lower triangular [Tp × Tp] (zeros above the
// diagonal), r and c [Tp × DH].
template <int DH>
NF_INLINE void lowerTimesRows(const float* l, const float* r, float* c, int64_t Tp, float alpha) {
  constexpr int R = rowsPerBlock(DH), kVecs = DH / kLanes;
  for (int64_t i = 0; i < Tp; i += R) {
    Vec acc[R][kVecs] = {};
    for (int64_t j = 0; j < i + R; ++j) {
      const float* row = r + j * DH;
#pragma GCC unroll 16
      for (int k = 0; k < R; ++k) {
        const float x = l[(i + k) * Tp + j];
#pragma GCC unroll 16
        for (int d = 0; d < kVecs; ++d) acc[k][d] += x * load(row + d * kLanes);
      }
    }
#pragma GCC unroll 16
    for (int k = 0; k < R; ++k)
#pragma GCC unroll 16
      for (int d = 0; d < kVecs; ++d) store(c + (i + k) * DH + d * kLanes, alpha * acc[k][d]);
  }
}

// c[j] = alpha·Σ_{i ≥ j} l[i][j]·r[i]: the transposed product, alpha·lᵀ·r, with the same operands.
template <int DH>
NF_INLINE void upperTimesRows(const float* l, const float* r, float* c, int64_t Tp, float alpha) {
  constexpr int R = rowsPerBlock(DH), kVecs = DH / kLanes;
  for (int64_t j = 0; j < Tp; j += R) {
    Vec acc[R][kVecs] = {};
    for (int64_t i = j; i < Tp; ++i) {
      const float* row = r + i * DH;
#pragma GCC unroll 16
      for (int k = 0; k < R; ++k) {
        const float x = l[i * Tp + j + k];
#pragma GCC unroll 16
        for (int d = 0; d < kVecs; ++d) acc[k][d] += x * load(row + d * kLanes);
      }
    }
#pragma GCC unroll 16
    for (int k = 0; k < R; ++k)
#pragma GCC unroll 16
      for (int d = 0; d < kVecs; ++d) store(c + (j + k) * DH + d * kLanes, alpha * acc[k][d]);
  }
}

// Row i of the causal softmax of scale·scores, in place, over the whole padded row: keys after i and rows
// at or after T become 0. Sums and maxima run in kBlock lanes so that they vectorize; only the block that
// holds key i needs a mask.
NF_INLINE void causalSoftmax(float* scores, int64_t Tp, int64_t T, float scale) {
  constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < Tp; ++i) {
    float* row = scores + i * Tp;
    if (i >= T) {
      std::fill(row, row + Tp, 0.0f);
      continue;
    }
    const int64_t last = i / kBlock * kBlock, seen = last + kBlock;  // key i's block, and where it ends
    float lanes[kBlock];
    for (int l = 0; l < kBlock; ++l) lanes[l] = last + l <= i ? row[last + l] : kMinusInfinity;
    for (int64_t j = 0; j < last; j += kBlock)
      for (int l = 0; l < kBlock; ++l) lanes[l] = std::max(lanes[l], row[j + l]);
    // scale·(score − max), not scale·score − scale·max: contracted into one multiply-add, the latter leaves
    // the largest score the rounding error of scale·max, which at scores of ~1e9 (a run blowing up) passes
    // exp's range and flattens the row. This way the largest score gives exactly exp(0) = 1.
    const float largest = *std::max_element(lanes, lanes + kBlock);
    for (int l = 0; l < kBlock; ++l) {
      const float e = exponential(scale * (row[last + l] - largest));  // then masked: so it vectorizes
      row[last + l] = lanes[l] = last + l <= i ? e : 0.0f;
    }
    for (int64_t j = 0; j < last; j += kBlock)
      for (int l = 0; l < kBlock; ++l) {
        const float e = exponential(scale * (row[j + l] - largest));
        row[j + l] = e;
        lanes[l] += e;
      }
    float sum = 0;
    for (float e : lanes) sum += e;
    const float inverse = 1.0f / sum;
    for (int64_t j = 0; j < seen; ++j) row[j] *= inverse;
    std::fill(row + seen, row + Tp, 0.0f);
  }
}

// The scores' gradient from the pattern's, in place: g ← p ⊙ (g − Σ_j p·g) on each row's blocks up to key
// i (where p is 0 after key i, and g was computed), 0 after them (where g was never written).
NF_INLINE void causalSoftmaxBackward(const float* pattern, float* grad, int64_t Tp, int64_t T) {
  for (int64_t i = 0; i < Tp; ++i) {
    const float* p = pattern + i * Tp;
    float* g = grad + i * Tp;
    const int64_t seen = i < T ? (i / kBlock + 1) * kBlock : 0;
    float lanes[kBlock] = {};
    for (int64_t j = 0; j < seen; j += kBlock)
      for (int l = 0; l < kBlock; ++l) lanes[l] += p[j + l] * g[j + l];
    float dot = 0;
    for (float s : lanes) dot += s;
    for (int64_t j = 0; j < seen; ++j) g[j] = p[j] * (g[j] - dot);
    std::fill(g + seen, g + Tp, 0.0f);
  }
}

// One head's rows into a zero-padded [Tp × DH] buffer, or transposed into [DH × Tp].
template <int DH>
NF_INLINE void gatherRows(HeadRows m, int64_t T, int64_t Tp, float* out) {
  for (int64_t t = 0; t < T; ++t)
    std::copy(m.data + t * m.rowStride, m.data + t * m.rowStride + DH, out + t * DH);
  std::fill(out + T * DH, out + Tp * DH, 0.0f);
}
template <int DH>
NF_INLINE void gatherTransposed(HeadRows m, int64_t T, int64_t Tp, float* out) {
  std::fill(out, out + DH * Tp, 0.0f);
  for (int64_t t = 0; t < T; ++t)
    for (int d = 0; d < DH; ++d) out[d * Tp + t] = m.data[t * m.rowStride + d];
}
template <int DH>
NF_INLINE void scatterRows(const float* in, int64_t T, HeadRows m) {
  for (int64_t t = 0; t < T; ++t) std::copy(in + t * DH, in + t * DH + DH, m.data + t * m.rowStride);
}

// Scratch space of the calling thread, reused across heads and steps.
float* scratch(std::size_t floats) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < floats) buffer.resize(floats);
  return buffer.data();
}

template <int DH>
NF_INLINE void forwardHead(int64_t T, float scale, HeadRows q, HeadRows k, HeadRows v, float* pattern,
                           HeadRows z) {
  const int64_t Tp = patternLength(T), rows = Tp * DH;
  float* buffers = scratch(4 * rows);
  float *qRows = buffers, *kT = buffers + rows, *vRows = buffers + 2 * rows, *zRows = buffers + 3 * rows;
  gatherRows<DH>(q, T, Tp, qRows);
  gatherTransposed<DH>(k, T, Tp, kT);
  gatherRows<DH>(v, T, Tp, vRows);
  lowerScores<DH>(qRows, kT, pattern, Tp);
  causalSoftmax(pattern, Tp, T, scale);
  lowerTimesRows<DH>(pattern, vRows, zRows, Tp, 1.0f);
  scatterRows<DH>(zRows, T, z);
}

template <int DH>
NF_INLINE void backwardHead(int64_t T, float scale, HeadRows q, HeadRows k, HeadRows v, const float* pattern,
                            HeadRows gradZ, HeadRows gradQ, HeadRows gradK, HeadRows gradV) {
  const int64_t Tp = patternLength(T), rows = Tp * DH;
  float* buffers = scratch(5 * rows + Tp * Tp);
  float *qRows = buffers, *kRows = buffers + rows, *vT = buffers + 2 * rows, *gzRows = buffers + 3 * rows,
        *out = buffers + 4 * rows, *gradScores = buffers + 5 * rows;
  gatherRows<DH>(q, T, Tp, qRows);
  gatherRows<DH>(k, T, Tp, kRows);
  gatherTransposed<DH>(v, T, Tp, vT);
  gatherRows<DH>(gradZ, T, Tp, gzRows);
  upperTimesRows<DH>(pattern, gzRows, out, Tp, 1.0f);  // ∂v = patternᵀ·∂z
  scatterRows<DH>(out, T, gradV);
  lowerScores<DH>(gzRows, vT, gradScores, Tp);  // ∂pattern = ∂z·vᵀ
  causalSoftmaxBackward(pattern, gradScores, Tp, T);
  lowerTimesRows<DH>(gradScores, kRows, out, Tp, scale);  // ∂q = scale·∂scores·k
  scatterRows<DH>(out, T, gradQ);
  upperTimesRows<DH>(gradScores, qRows, out, Tp, scale);  // ∂k = scale·∂scoresᵀ·q
  scatterRows<DH>(out, T, gradK);
}

}  // namespace

bool supportsHeadSize(int64_t dh) { return dh == 16 || dh == 32 || dh == 64 || dh == 80 || dh == 128; }

int64_t patternLength(int64_t T) { return (T + kBlock - 1) / kBlock * kBlock; }

// One switch per entry point, not a shared helper taking a lambda: a lambda would not be compiled for the
// clone's instruction set.
NF_VECTOR_CLONES void forward(int64_t T, int64_t dh, float scale, HeadRows q, HeadRows k, HeadRows v,
                              float* pattern, HeadRows z) {
  switch (dh) {
    case 16:
      return forwardHead<16>(T, scale, q, k, v, pattern, z);
    case 32:
      return forwardHead<32>(T, scale, q, k, v, pattern, z);
    case 64:
      return forwardHead<64>(T, scale, q, k, v, pattern, z);
    case 80:
      return forwardHead<80>(T, scale, q, k, v, pattern, z);
    case 128:
      return forwardHead<128>(T, scale, q, k, v, pattern, z);
  }
}

NF_VECTOR_CLONES void backward(int64_t T, int64_t dh, float scale, HeadRows q, HeadRows k, HeadRows v,
                               const float* pattern, HeadRows gradZ, HeadRows gradQ, HeadRows gradK,
                               HeadRows gradV) {
  switch (dh) {
    case 16:
      return backwardHead<16>(T, scale, q, k, v, pattern, gradZ, gradQ, gradK, gradV);
    case 32:
      return backwardHead<32>(T, scale, q, k, v, pattern, gradZ, gradQ, gradK, gradV);
    case 64:
      return backwardHead<64>(T, scale, q, k, v, pattern, gradZ, gradQ, gradK, gradV);
    case 80:
      return backwardHead<80>(T, scale, q, k, v, pattern, gradZ, gradQ, gradK, gradV);
    case 128:
      return backwardHead<128>(T, scale, q, k, v, pattern, gradZ, gradQ, gradK, gradV);
  }
}

}  // namespace nf::attention_kernel
