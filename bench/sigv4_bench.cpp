// Cost of signing one DynamoDB UpdateItem (~600-byte body, session token), the per-attempt
// overhead every store operation pays.
#include <benchmark/benchmark.h>

#include <chrono>

#include "aws/sigv4/sigv4.hpp"

namespace {

using namespace std::chrono_literals;

const ic::aws::Credentials kCredentials{
    .access_key_id = "ASIAEXAMPLEEXAMPLE01",
    .secret_access_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
    .session_token = std::string(400, 'T')};  // STS tokens run to several hundred bytes
const ic::aws::SigningParams kParams{
    .region = "eu-west-1",
    .service = "dynamodb",
    .time = std::chrono::sys_days{std::chrono::year{2026} / 11 / 30} + 10h};

ic::http::HttpRequest update_item() {
  std::string body =
      R"({"TableName":"idempotency","Key":{"pk":{"S":"CHG-20261130-000123"}},)"
      R"("UpdateExpression":"SET #s = :done, #o = :outcome, #u = :now, #e = :exp REMOVE #l",)"
      R"("ConditionExpression":"#s = :claimed AND #t = :token",)"
      R"("ExpressionAttributeNames":{"#s":"status","#o":"outcome","#u":"updatedAt",)"
      R"("#e":"expiresAt","#l":"leaseUntil","#t":"claimToken"},)"
      R"("ExpressionAttributeValues":{":done":{"S":"DONE"},":claimed":{"S":"CLAIMED"},)"
      R"(":token":{"S":"7f3c9a2e-5b1d-4e8f-9c6a-2d4b8e1f0a37"},)"
      R"(":outcome":{"S":"{\"debitId\":\"DEB-000123\",\"notified\":true}"},)"
      R"(":now":{"N":"1796033400000"},":exp":{"N":"1798625400"}},)"
      R"("ReturnValuesOnConditionCheckFailure":"ALL_OLD"})";
  return {.method = "POST",
          .url = "https://dynamodb.eu-west-1.amazonaws.com/",
          .headers = {{"content-type", "application/x-amz-json-1.0"},
                      {"x-amz-target", "DynamoDB_20120810.UpdateItem"},
                      {"amz-sdk-invocation-id", "0b7e5a52-8f4e-4d39-9c1b-6a0f0e5b1c2d"},
                      {"amz-sdk-request", "attempt=1; max=3"}},
          .body = std::move(body)};
}

void BM_ComputeSignature(benchmark::State& state) {
  auto request = update_item();
  ic::aws::sign_request(request, kCredentials, kParams);
  for (auto _ : state) {
    benchmark::DoNotOptimize(ic::aws::compute_signature(request, kCredentials, kParams));
  }
  state.counters["body_bytes"] = static_cast<double>(request.body.size());
}
BENCHMARK(BM_ComputeSignature);

// What a client does per attempt: fresh headers on a copy of the unsigned request.
void BM_SignRequest(benchmark::State& state) {
  const auto unsigned_request = update_item();
  for (auto _ : state) {
    auto request = unsigned_request;
    ic::aws::sign_request(request, kCredentials, kParams);
    benchmark::DoNotOptimize(request.headers.data());
  }
}
BENCHMARK(BM_SignRequest);

}  // namespace

BENCHMARK_MAIN();
