// The bank clients' shared wiring: `run` and `renotify` build them the same way.
#pragma once

#include <memory>

#include "adapters/bank/bearer_token_file.hpp"
#include "app/settings.hpp"
#include "http/http_transport.hpp"

namespace ic::app {

// The bank answers in milliseconds; 10 s bounds a hung call well inside any sane lease, and a
// timeout is safe to retry because the bank dedupes on chargeId.
inline constexpr http::HttpTimeouts kBankTimeouts{.connect = std::chrono::seconds(2),
                                                  .total = std::chrono::seconds(10)};

// The token file a *_TOKEN_FILE setting names, read once now so a bad one stops start-up; null
// when the setting is empty (no Authorization header).
[[nodiscard]] std::expected<std::unique_ptr<bank::BearerTokenFile>, ConfigError> open_token_file(
    std::string_view setting, const std::string& path);

}  // namespace ic::app
