#include "common/env_switch.h"

#include <cstdlib>
#include <string>

#include "common/errors.h"

namespace pk {

bool env_switch(const char* name, bool unset, const char* meaning) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return unset;
    const std::string s(v);
    if (s == "0") return false;
    if (s == "1") return true;
    throw InvalidInput(std::string(name) + " must be " + meaning + ", not \"" + s + "\"");
}

}  // namespace pk
