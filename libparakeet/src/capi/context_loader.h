// Loading a context: the file's kind decides the loader, and a bundle's component is chosen
// first (model/bundle/bundle.h). Shared by parakeet_capi_load_with and _load_component.
#pragma once

#include "capi/context.h"

namespace pk::capi {

// A new context for the model at `gguf_path` with the environment's load options, then
// `options_json`'s; `component`, when not NULL, names the bundle component to load (it overrides
// the options' "component"). Throws; the caller guards.
parakeet_ctx* load_context(const char* gguf_path, const char* options_json, const char* component);

}  // namespace pk::capi
