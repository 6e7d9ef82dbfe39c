// What every SQS batch call shares: the checks of its entries and the shape of its reply.
#pragma once

#include <expected>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "fast_aws/reply.hpp"
#include "fast_aws/sqs_faults.hpp"

namespace ic::bench::fast_aws {

// The request's Entries: 1 to 10, with distinct, well-formed Ids.
std::expected<const nlohmann::json*, Reply> batch_entries(const nlohmann::json& request);

// A batch reply: {"Successful":[{"Id":..,<success members>}],"Failed":[...]}.
class BatchReply {
 public:
  // `members` are written after the Id, each with its leading comma.
  void success(const std::string& id, std::string_view members = {});
  void failure(const std::string& id, const EntryFault& fault);
  // A success without members, or the failure `fault`.
  void outcome(const std::string& id, const std::optional<EntryFault>& fault);
  std::string take() &&;

 private:
  std::string successful_;
  std::string failed_;
};

}  // namespace ic::bench::fast_aws
