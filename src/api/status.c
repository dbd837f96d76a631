/* Status names and texts, generated from ROTQ_STATUS_MAP. */
#include "rotq.h"

const char *rotq_status_string(rotq_status status) {
    switch (status) {
#define ROTQ_STATUS_TEXT_(name, value, text) \
    case name: return text;
        ROTQ_STATUS_MAP(ROTQ_STATUS_TEXT_)
#undef ROTQ_STATUS_TEXT_
    default: return "unknown rotq status code";
    }
}

const char *rotq_status_name(rotq_status status) {
    switch (status) {
#define ROTQ_STATUS_NAME_(name, value, text) \
    case name: return #name;
        ROTQ_STATUS_MAP(ROTQ_STATUS_NAME_)
#undef ROTQ_STATUS_NAME_
    default: return "ROTQ_STATUS_UNKNOWN";
    }
}
