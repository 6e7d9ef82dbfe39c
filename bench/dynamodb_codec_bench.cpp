// Cost of the DynamoDB store's CPU work per claim, without a network: building and
// serialising the conditional UpdateItem, and parsing and decoding the ALL_NEW reply.
#include <benchmark/benchmark.h>

#include "adapters/dynamodb/dynamodb_codec.hpp"

namespace {

using namespace std::chrono_literals;
using namespace ic;

const dynamodb::TableSpec kTable{.name = "idempotency"};

idempotency::ClaimRequest claim_request() {
  return {.key = "CHG-20261130-000123",
          .payload_hash = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
          .token = "5f0c6c1e-8d3b-4b8e-9a55-2f1d3c4b5a69",
          .owner = "ip-10-0-1-23/4711",
          .now = Instant{Millis{1'764'460'800'000}},
          .lease = 60s};
}

const char* const kAllNewReply = R"({"Attributes":{
  "pk":{"S":"CHG-20261130-000123"},"state":{"S":"IN_PROGRESS"},
  "leaseUntil":{"N":"1764460860000"},"claimToken":{"S":"5f0c6c1e-8d3b-4b8e-9a55-2f1d3c4b5a69"},
  "fence":{"N":"1"},"owner":{"S":"ip-10-0-1-23/4711"},
  "payloadHash":{"S":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},
  "createdAt":{"N":"1764460800000"},"updatedAt":{"N":"1764460800000"},
  "expiresAt":{"N":"1767052800"}}})";

// What the client sends: the request object and its serialised body.
void BM_EncodeClaim(benchmark::State& state) {
  const auto request = claim_request();
  for (auto _ : state) {
    std::string body = dynamodb::encode_claim(kTable, request);
    benchmark::DoNotOptimize(body);
  }
}
BENCHMARK(BM_EncodeClaim);

// What the client receives: parse the reply body, then decode the item.
void BM_DecodeClaimReply(benchmark::State& state) {
  const std::string reply = kAllNewReply;
  for (auto _ : state) {
    auto parsed = nlohmann::json::parse(reply);
    auto record = dynamodb::decode_record(kTable, parsed["Attributes"]);
    benchmark::DoNotOptimize(record);
  }
}
BENCHMARK(BM_DecodeClaimReply);

// The decode step alone, on an already parsed item.
void BM_DecodeRecord(benchmark::State& state) {
  const auto item = nlohmann::json::parse(kAllNewReply)["Attributes"];
  for (auto _ : state) {
    auto record = dynamodb::decode_record(kTable, item);
    benchmark::DoNotOptimize(record);
  }
}
BENCHMARK(BM_DecodeRecord);

}  // namespace

BENCHMARK_MAIN();
