// Test-only: prints our default endpoint for each "service region fips dualstack" line on
// stdin (flags 0/1), one URL a line, so tests/system/test_endpoint_rules.py can compare them
// with botocore's EndpointRulesetResolver.
#include <iostream>
#include <string>

#include "aws/protocol/endpoints.hpp"

int main() {
  std::string service;
  std::string region;
  int fips = 0;
  int dualstack = 0;
  while (std::cin >> service >> region >> fips >> dualstack) {
    std::cout << ic::aws::default_endpoint(service, region,
                                           {.fips = fips != 0, .dualstack = dualstack != 0})
              << "\n";
  }
  return 0;
}
