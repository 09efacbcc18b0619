// A 0/1 switch read from the environment (the PARAKEET_* options that change how a model is
// loaded).
#pragma once

namespace pk {

// Unset or empty gives `unset`; "0" false, "1" true; anything else throws InvalidInput,
// naming the variable and `meaning` (what each value does).
bool env_switch(const char* name, bool unset, const char* meaning);

}  // namespace pk
