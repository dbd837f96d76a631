/* dtype helpers. */
#include "validate.h"

int rotq_dtype_bits(rotq_dtype dtype) {
    switch (dtype) {
    case ROTQ_DTYPE_F32: return 32;
    case ROTQ_DTYPE_F16: return 16;
    case ROTQ_DTYPE_BF16: return 16;
    case ROTQ_DTYPE_I8: return 8;
    case ROTQ_DTYPE_FP8_E4M3: return 8;
    case ROTQ_DTYPE_I4X2: return 4;
    default: return 0;
    }
}

const char *rotq_dtype_name(rotq_dtype dtype) {
    switch (dtype) {
    case ROTQ_DTYPE_F32: return "f32";
    case ROTQ_DTYPE_F16: return "f16";
    case ROTQ_DTYPE_BF16: return "bf16";
    case ROTQ_DTYPE_I8: return "i8";
    case ROTQ_DTYPE_FP8_E4M3: return "fp8_e4m3";
    case ROTQ_DTYPE_I4X2: return "i4x2";
    default: return "invalid";
    }
}

int rotq__dtype_is_float(rotq_dtype dtype) {
    return dtype == ROTQ_DTYPE_F32 || dtype == ROTQ_DTYPE_F16 || dtype == ROTQ_DTYPE_BF16;
}
