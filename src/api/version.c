/* Library version. */
#include "rotq.h"

#define ROTQ_STR_(x) #x
#define ROTQ_STR(x) ROTQ_STR_(x)

const char *rotq_version(void) {
    return ROTQ_STR(ROTQ_VERSION_MAJOR) "." ROTQ_STR(ROTQ_VERSION_MINOR) "." ROTQ_STR(ROTQ_VERSION_PATCH);
}

int rotq_version_number(void) {
    return ROTQ_VERSION_MAJOR * 10000 + ROTQ_VERSION_MINOR * 100 + ROTQ_VERSION_PATCH;
}
