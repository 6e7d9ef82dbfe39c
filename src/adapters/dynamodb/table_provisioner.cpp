#include "adapters/dynamodb/table_provisioner.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "adapters/dynamodb/dynamodb_codec.hpp"
#include "event/run_blocking.hpp"

namespace ic::dynamodb {
namespace {

using nlohmann::json;

constexpr std::string_view kTtlAttribute = "expiresAt";

// Provisioning is an operator command's, outside any loop: each request blocks its thread.
aws::JsonClient::Reply call(aws::JsonClient& client, std::string_view operation,
                            const json& request) {
  return event::run_blocking(client.call(operation, request));
}

// object[outer][inner] when it is a string, else empty: a reply of another shape reads as an
// unknown status rather than throwing.
std::string nested_string(const json& object, const char* outer, const char* inner) {
  const auto parent = object.find(outer);
  if (parent == object.end() || !parent->is_object()) return {};
  const auto value = parent->find(inner);
  return value != parent->end() && value->is_string() ? value->get<std::string>() : std::string{};
}

std::expected<bool, Error> create_table(aws::JsonClient& client, std::string_view table) {
  // The sparse index of records that need a person (docs/design.md §3): only final writes
  // that set `attention` put an item in it. ALL: `list` reads the records from the index alone.
  const json attention_index = {{"IndexName", kAttentionIndex},
                                {"KeySchema",
                                 {{{"AttributeName", "attention"}, {"KeyType", "HASH"}},
                                  {{"AttributeName", "attentionAt"}, {"KeyType", "RANGE"}}}},
                                {"Projection", {{"ProjectionType", "ALL"}}}};
  auto reply = call(client, "CreateTable",
                    {{"TableName", table},
                     {"AttributeDefinitions",
                      {{{"AttributeName", "pk"}, {"AttributeType", "S"}},
                       {{"AttributeName", "attention"}, {"AttributeType", "S"}},
                       {{"AttributeName", "attentionAt"}, {"AttributeType", "N"}}}},
                     {"KeySchema", {{{"AttributeName", "pk"}, {"KeyType", "HASH"}}}},
                     {"GlobalSecondaryIndexes", json::array({attention_index})},
                     {"BillingMode", "PAY_PER_REQUEST"}});
  if (reply) return true;
  if (reply.error().code == "ResourceInUseException") return false;
  return std::unexpected(reply.error());
}

// Whether the table has the attention index: true once created by provision; an older table
// gets it with the UpdateTable that docs/design.md §3 gives.
// Any reply shape reads as "no index" rather than throwing.
bool has_attention_index(const json& described) {
  const auto table = described.find("Table");
  if (table == described.end() || !table->is_object()) return false;
  const auto indexes = table->find("GlobalSecondaryIndexes");
  if (indexes == table->end() || !indexes->is_array()) return false;
  return std::ranges::any_of(*indexes, [](const json& index) {
    if (!index.is_object()) return false;
    const auto name = index.find("IndexName");
    return name != index.end() && name->is_string() && name->get<std::string>() == kAttentionIndex;
  });
}

std::expected<bool, Error> wait_until_active(aws::JsonClient& client, std::string_view table,
                                             const ProvisionOptions& options) {
  const Instant deadline = options.clock.now() + options.active_timeout;
  std::string status;
  for (;;) {
    auto reply = call(client, "DescribeTable", {{"TableName", table}});
    if (!reply) return std::unexpected(reply.error());
    status = nested_string(*reply, "Table", "TableStatus");
    if (status == "ACTIVE") return has_attention_index(*reply);
    if (options.clock.now() >= deadline) break;
    options.sleeper.sleep_for(options.poll_interval);
  }
  return std::unexpected(Error{.error_class = ErrorClass::Retryable,
                               .code = "TableNotActive",
                               .message = fmt::format("table {} still {} after {} ms", table,
                                                      status, options.active_timeout.count())});
}

std::expected<bool, Error> enable_ttl(aws::JsonClient& client, std::string_view table) {
  auto described = call(client, "DescribeTimeToLive", {{"TableName", table}});
  if (!described && described.error().code == "UnknownOperationException") return false;
  if (!described) return std::unexpected(described.error());
  const auto status = nested_string(*described, "TimeToLiveDescription", "TimeToLiveStatus");
  const auto attribute = nested_string(*described, "TimeToLiveDescription", "AttributeName");
  if ((status == "ENABLED" || status == "ENABLING") && attribute == kTtlAttribute) return true;
  if (status == "ENABLED" || status == "ENABLING") {
    // Only one TTL attribute per table: silently keeping another one would never expire ours.
    return std::unexpected(Error{.error_class = ErrorClass::Permanent,
                                 .code = "TtlOnOtherAttribute",
                                 .message = fmt::format("table {} has TTL on {}, expected {}",
                                                        table, attribute, kTtlAttribute)});
  }
  auto updated =
      call(client, "UpdateTimeToLive",
           {{"TableName", table},
            {"TimeToLiveSpecification", {{"Enabled", true}, {"AttributeName", kTtlAttribute}}}});
  if (updated) return true;
  const auto& error = updated.error();
  if (error.code == "UnknownOperationException") return false;
  // A concurrent provision may have enabled it between our describe and update.
  if (error.code == "ValidationException" &&
      error.message.find("already enabled") != std::string::npos) {
    return true;
  }
  return std::unexpected(error);
}

}  // namespace

std::expected<ProvisionReport, Error> provision_table(aws::JsonClient& client,
                                                      std::string_view table,
                                                      const ProvisionOptions& options) {
  auto created = create_table(client, table);
  if (!created) return std::unexpected(created.error());
  auto indexed = wait_until_active(client, table, options);
  if (!indexed) return std::unexpected(indexed.error());
  auto ttl = enable_ttl(client, table);
  if (!ttl) return std::unexpected(ttl.error());
  return ProvisionReport{.created = *created, .ttl_enabled = *ttl, .attention_index = *indexed};
}

}  // namespace ic::dynamodb
