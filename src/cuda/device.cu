// Placeholder while the CUDA kernels are written (replaced in the GPU issue).
#include <cuda_runtime.h>
#include "internal.h"
