// SQS's errors: each with the JSON protocol's type and the query protocol's code, which
// botocore and the consumer's client report.
#pragma once

#include <string>
#include <string_view>

#include "fast_aws/reply.hpp"

namespace ic::bench::fast_aws {

struct SqsFault {
  std::string_view type;   // the JSON protocol's __type, after "com.amazonaws.sqs#"
  std::string_view query;  // the query protocol's code, which botocore and our client report
};

inline constexpr SqsFault kQueueDoesNotExist{"QueueDoesNotExist",
                                             "AWS.SimpleQueueService.NonExistentQueue"};
inline constexpr SqsFault kQueueNameExists{"QueueNameExists", "QueueAlreadyExists"};
inline constexpr SqsFault kInvalidParameter{"InvalidParameterValue", "InvalidParameterValue"};
inline constexpr SqsFault kMissingParameter{"MissingParameter", "MissingParameter"};
inline constexpr SqsFault kInvalidAttributeName{"InvalidAttributeName", "InvalidAttributeName"};
inline constexpr SqsFault kInvalidAttributeValue{"InvalidAttributeValue", "InvalidAttributeValue"};
inline constexpr SqsFault kInvalidMessageContents{"InvalidMessageContents",
                                                  "InvalidMessageContents"};
inline constexpr SqsFault kReceiptHandleIsInvalid{"ReceiptHandleIsInvalid",
                                                  "ReceiptHandleIsInvalid"};
inline constexpr SqsFault kMessageNotInflight{"MessageNotInflight",
                                              "AWS.SimpleQueueService.MessageNotInflight"};
inline constexpr SqsFault kEmptyBatch{"EmptyBatchRequest",
                                      "AWS.SimpleQueueService.EmptyBatchRequest"};
inline constexpr SqsFault kTooManyEntries{"TooManyEntriesInBatchRequest",
                                          "AWS.SimpleQueueService.TooManyEntriesInBatchRequest"};
inline constexpr SqsFault kIdsNotDistinct{"BatchEntryIdsNotDistinct",
                                          "AWS.SimpleQueueService.BatchEntryIdsNotDistinct"};
inline constexpr SqsFault kInvalidBatchEntryId{"InvalidBatchEntryId",
                                               "AWS.SimpleQueueService.InvalidBatchEntryId"};
inline constexpr SqsFault kBatchTooLong{"BatchRequestTooLong",
                                        "AWS.SimpleQueueService.BatchRequestTooLong"};

Reply sqs_error(const SqsFault& fault, std::string_view message);

// A failure that is one entry's in a batch reply, or the whole request's otherwise.
struct EntryFault {
  const SqsFault* fault;
  std::string message;
};

}  // namespace ic::bench::fast_aws
