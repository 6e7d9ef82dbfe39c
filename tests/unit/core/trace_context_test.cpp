// Trace context: the W3C traceparent and X-Ray AWSTraceHeader parsers accept exactly the
// valid shapes (anything else is no context, never an exception), and TraceScope makes a
// context current on its thread only, restoring the previous one.
#include "core/trace_context.hpp"

#include <gtest/gtest.h>

#include <string>
#include <thread>

namespace ic {
namespace {

constexpr std::string_view kTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST(Traceparent, ParsesAVersion00Header) {
  const auto context = parse_traceparent(kTraceparent);
  ASSERT_TRUE(context);
  EXPECT_EQ(context->trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(context->parent_id, "00f067aa0ba902b7");
  EXPECT_EQ(context->flags, 0x01);
  EXPECT_EQ(context->traceparent(), kTraceparent);
}

TEST(Traceparent, KeepsUnknownFlagBits) {
  const auto context = parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-a0");
  ASSERT_TRUE(context);
  EXPECT_EQ(context->flags, 0xa0);
  EXPECT_EQ(context->traceparent(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-a0");
}

TEST(Traceparent, RefusesEveryMalformedShape) {
  for (const std::string_view text : {
           "", "00",
           "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",   // unknown version
           "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",   // forbidden version
           "00-00000000000000000000000000000000-00f067aa0ba902b7-01",   // zero trace-id
           "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",   // zero parent-id
           "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",   // upper case
           "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",    // trace-id too short
           "00-4bf92f3577b34da6a3ce929d0e0e47366-00f067aa0ba902b7-01",  // trace-id too long
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b-01",    // parent-id too short
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",    // one flag digit
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",   // non-hex flags
           "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",   // non-hex trace-id
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba9z2b7-01",   // non-hex parent-id
           "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",   // wrong separators
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",  // trailing data
           " 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  // leading space
       }) {
    EXPECT_FALSE(parse_traceparent(text)) << text;
  }
  EXPECT_FALSE(
      parse_traceparent(std::string_view("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa"
                                         "\0a902b7-01",
                                         55)));
}

TEST(AwsTraceHeader, ConvertsToW3c) {
  const auto context = parse_aws_trace_header(
      "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1");
  ASSERT_TRUE(context);
  EXPECT_EQ(context->traceparent(), "00-5759e988bd862e3fe1be46a994272793-53995c3f42cd8ad8-01");
}

TEST(AwsTraceHeader, AcceptsFieldsInAnyOrderAndIgnoresOthers) {
  const auto context = parse_aws_trace_header(
      "Sampled=0;Lineage=a87bd80c:1|68fd508a:5;Parent=53995C3F42CD8AD8;"
      "Root=1-5759E988-BD862E3FE1BE46A994272793");
  ASSERT_TRUE(context);
  EXPECT_EQ(context->traceparent(), "00-5759e988bd862e3fe1be46a994272793-53995c3f42cd8ad8-00");
}

TEST(AwsTraceHeader, UnsampledOrUndecidedIsFlags00) {
  for (const std::string_view sampled : {"", ";Sampled=?", ";Sampled=0"}) {
    const std::string text =
        "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8" + std::string(sampled);
    const auto context = parse_aws_trace_header(text);
    ASSERT_TRUE(context) << text;
    EXPECT_EQ(context->flags, 0x00) << text;
  }
}

TEST(AwsTraceHeader, RefusesEveryMalformedShape) {
  for (const std::string_view text : {
           "",
           "Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1",                // no Parent
           "Parent=53995c3f42cd8ad8;Sampled=1",                                 // no Root
           "Root=2-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8",  // version 2
           "Root=1-5759e98-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8",   // short time
           "Root=1-5759e988-bd862e3fe1be46a99427279;Parent=53995c3f42cd8ad8",   // short random
           "Root=1-5759e988bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8",   // no dash
           "Root=1-5759e988-bd862e3fe1be46a99427279x;Parent=53995c3f42cd8ad8",  // non-hex
           "Root=1-00000000-000000000000000000000000;Parent=53995c3f42cd8ad8",  // zero trace
           "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=0000000000000000",  // zero parent
           "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad",   // short parent
           "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=2",
           "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Parent=1",
           "Root=1-5759e988-bd862e3fe1be46a994272793;Root=1-5759e988-bd862e3fe1be46a994272793;"
           "Parent=53995c3f42cd8ad8",
           "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;garbage",
           "root=1-5759e988-bd862e3fe1be46a994272793;parent=53995c3f42cd8ad8",  // names are cased
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",           // a traceparent
       }) {
    EXPECT_FALSE(parse_aws_trace_header(text)) << text;
  }
}

TEST(TraceScope, MakesTheContextCurrentUntilItEnds) {
  EXPECT_EQ(current_traceparent(), "");
  {
    const TraceScope outer(parse_traceparent(kTraceparent));
    EXPECT_EQ(current_traceparent(), kTraceparent);
    {
      const TraceScope none(std::nullopt);
      EXPECT_EQ(current_traceparent(), "");
    }
    EXPECT_EQ(current_traceparent(), kTraceparent);
    std::string elsewhere = "unset";
    std::thread([&] { elsewhere = std::string(current_traceparent()); }).join();
    EXPECT_EQ(elsewhere, "");  // thread-local: another worker's charge is not this one's
  }
  EXPECT_EQ(current_traceparent(), "");
}

}  // namespace
}  // namespace ic
