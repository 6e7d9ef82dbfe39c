// SQS batch checks and replies (sqs_batch.hpp).
#include "fast_aws/sqs_batch.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <vector>

#include "fast_aws/json_text.hpp"
#include "fast_aws/request_members.hpp"

namespace ic::bench::fast_aws {
namespace {

bool valid_batch_id(std::string_view id) {
  return !id.empty() && id.size() <= 80 && std::ranges::all_of(id, [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
  });
}

}  // namespace

std::expected<const nlohmann::json*, Reply> batch_entries(const nlohmann::json& request) {
  const auto entries = request.find("Entries");
  if (entries == request.end() || !entries->is_array() || entries->empty()) {
    return std::unexpected(sqs_error(
        kEmptyBatch, "There should be at least one SendMessageBatchRequestEntry in the request."));
  }
  if (entries->size() > 10) {
    return std::unexpected(sqs_error(
        kTooManyEntries, "Maximum number of entries per request are 10. You have sent " +
                             number_text(static_cast<std::int64_t>(entries->size())) + "."));
  }
  std::vector<std::string_view> ids;
  for (const auto& entry : *entries) {
    const std::string* id = entry.is_object() ? string_member(entry, "Id") : nullptr;
    if (id == nullptr || !valid_batch_id(*id)) {
      return std::unexpected(
          sqs_error(kInvalidBatchEntryId,
                    "A batch entry id can only contain alphanumeric characters, hyphens and "
                    "underscores. It can be at most 80 letters long."));
    }
    if (std::ranges::find(ids, *id) != ids.end()) {
      return std::unexpected(sqs_error(kIdsNotDistinct, "Id " + *id + " repeated."));
    }
    ids.push_back(*id);
  }
  return &*entries;
}

void BatchReply::success(const std::string& id, std::string_view members) {
  successful_ += successful_.empty() ? "" : ",";
  successful_ += R"({"Id":)";
  put_string(successful_, id);
  successful_ += members;
  successful_ += '}';
}

void BatchReply::failure(const std::string& id, const EntryFault& fault) {
  failed_ += failed_.empty() ? "" : ",";
  failed_ += R"({"Id":)";
  put_string(failed_, id);
  failed_ += R"(,"SenderFault":true,"Code":)";
  put_string(failed_, fault.fault->query);
  failed_ += R"(,"Message":)";
  put_string(failed_, fault.message);
  failed_ += '}';
}

void BatchReply::outcome(const std::string& id, const std::optional<EntryFault>& fault) {
  if (fault) {
    failure(id, *fault);
  } else {
    success(id);
  }
}

std::string BatchReply::take() && {
  return R"({"Successful":[)" + successful_ + R"(],"Failed":[)" + failed_ + "]}";
}

}  // namespace ic::bench::fast_aws
