package bench.compare.spring;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.HashMap;
import java.util.Map;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * The claim table of docs/design.md §3 through the AWS SDK v2 DynamoDbClient that Spring Cloud
 * AWS configures: every decision is one conditional UpdateItem (claim, complete, fail, release),
 * fenced on the claim token; a refused write is decided from the old item
 * (ReturnValuesOnConditionCheckFailure=ALL_OLD, else one strongly consistent GetItem). Same table
 * and attributes as `charge-recovery run` (provisioned by `charge-recovery provision`).
 */
@Component
public class ClaimStore {

  public enum Outcome { ACQUIRED, DUPLICATE_DONE, DUPLICATE_FAILED, DUPLICATE_IN_PROGRESS, PAYLOAD_MISMATCH }

  /** A claim's answer: the token that fences our later writes, or the refusing record's lease. */
  public record Claim(Outcome outcome, String token, long leaseUntil, String recordedHash) {}

  /** Our final write was refused: the lease expired and another delivery took the key. */
  public static class FencedException extends RuntimeException {
    FencedException(String key) {
      super("final write fenced for " + key);
    }
  }

  private static final SecureRandom RANDOM = new SecureRandom();

  private final DynamoDbClient dynamoDb;
  private final String table;
  private final long leaseMillis;
  private final long retentionSeconds;
  private final String owner;

  public ClaimStore(DynamoDbClient dynamoDb, @Value("${IDEMPOTENCY_TABLE}") String table,
      @Value("${LEASE_SECONDS:60}") long leaseSeconds, @Value("${RETENTION_DAYS:30}") long retentionDays) throws Exception {
    this.dynamoDb = dynamoDb;
    this.table = table;
    this.leaseMillis = leaseSeconds * 1000;
    this.retentionSeconds = retentionDays * 86_400;
    this.owner = InetAddress.getLocalHost().getHostName() + "/" + ManagementFactory.getRuntimeMXBean().getPid()
        + "/" + HexFormat.of().formatHex(bytes(3));
  }

  public Claim claim(String key, String payloadHash) {
    String token = HexFormat.of().formatHex(bytes(16));
    // A refusal by a record that would now allow the claim (its lease ran out in between, or
    // it was gone) is sent once more, as ours does.
    for (int round = 0; ; round++) {
      long now = System.currentTimeMillis();
      var values = new HashMap<String, AttributeValue>();
      values.put(":inprog", s("IN_PROGRESS"));
      values.put(":token", s(token));
      values.put(":owner", s(owner));
      values.put(":lease", n(now + leaseMillis));
      values.put(":h", s(payloadHash));
      values.put(":now", n(now));
      values.put(":exp", n(now / 1000 + retentionSeconds));
      values.put(":one", n(1));
      var request = UpdateItemRequest.builder().tableName(table).key(Map.of("pk", s(key)))
          .updateExpression("SET #state = :inprog, claimToken = :token, #owner = :owner, leaseUntil = :lease, "
              + "payloadHash = :h, updatedAt = :now, createdAt = if_not_exists(createdAt, :now), expiresAt = :exp "
              + "ADD fence :one")
          .conditionExpression("attribute_not_exists(pk) OR (#state = :inprog AND payloadHash = :h AND "
              + "(leaseUntil < :now OR claimToken = :token))")
          .expressionAttributeNames(Map.of("#state", "state", "#owner", "owner"))
          .expressionAttributeValues(values)
          .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD)
          .build();
      try {
        dynamoDb.updateItem(request);
        return new Claim(Outcome.ACQUIRED, token, now + leaseMillis, payloadHash);
      } catch (ConditionalCheckFailedException refused) {
        Map<String, AttributeValue> old = refused.hasItem() && !refused.item().isEmpty() ? refused.item() : read(key);
        Claim decided = classify(old, payloadHash, System.currentTimeMillis());
        if (decided != null || round == 1) {
          return decided != null ? decided : new Claim(Outcome.DUPLICATE_IN_PROGRESS, null, 0, payloadHash);
        }
      }
    }
  }

  /** The refusing record's meaning; null when it would allow the claim now. */
  private static Claim classify(Map<String, AttributeValue> old, String payloadHash, long now) {
    if (old == null || old.isEmpty()) return null;
    String recorded = str(old, "payloadHash");
    if (!payloadHash.equals(recorded)) return new Claim(Outcome.PAYLOAD_MISMATCH, null, 0, recorded);
    String state = str(old, "state");
    if ("DONE".equals(state)) return new Claim(Outcome.DUPLICATE_DONE, null, 0, recorded);
    if ("FAILED".equals(state)) return new Claim(Outcome.DUPLICATE_FAILED, null, 0, recorded);
    long leaseUntil = old.containsKey("leaseUntil") ? Long.parseLong(old.get("leaseUntil").n()) : 0;
    if (leaseUntil < now) return null;
    return new Claim(Outcome.DUPLICATE_IN_PROGRESS, null, leaseUntil, recorded);
  }

  /** DONE with `DEBITED` or `DEBITED_NOTIFICATION_FAILED`; the canonical payload is kept. */
  public void complete(String key, String token, String status, String debitRef, String payload) {
    long now = System.currentTimeMillis();
    var values = finalValues(token, "DONE", status, now);
    values.put(":ref", s(debitRef));
    values.put(":payload", s(payload));
    String set = "SET #state = :final, #status = :status, debitRef = :ref, payload = :payload, updatedAt = :now, "
        + "completedAt = :now, expiresAt = :exp";
    if ("DEBITED_NOTIFICATION_FAILED".equals(status)) {
      values.put(":attention", s(status));
      set += ", attention = :attention, attentionAt = :now";
    }
    writeFinal(key, token, "DONE", status, set, values);
  }

  /** FAILED with `FAILED_PERMANENT` and the bank's reason. */
  public void fail(String key, String token, String reason, String payload) {
    long now = System.currentTimeMillis();
    var values = finalValues(token, "FAILED", "FAILED_PERMANENT", now);
    values.put(":reason", s(reason));
    values.put(":payload", s(payload));
    values.put(":attention", s("FAILED"));
    writeFinal(key, token, "FAILED", "FAILED_PERMANENT",
        "SET #state = :final, #status = :status, failureReason = :reason, payload = :payload, updatedAt = :now, "
            + "completedAt = :now, expiresAt = :exp, attention = :attention, attentionAt = :now", values);
  }

  /** After a transient failure: leaseUntil = 0, so that the redelivery can claim at once. */
  public void release(String key, String token) {
    try {
      dynamoDb.updateItem(UpdateItemRequest.builder().tableName(table).key(Map.of("pk", s(key)))
          .updateExpression("SET leaseUntil = :zero")
          .conditionExpression("#state = :inprog AND claimToken = :token")
          .expressionAttributeNames(Map.of("#state", "state"))
          .expressionAttributeValues(Map.of(":zero", n(0), ":inprog", s("IN_PROGRESS"), ":token", s(token)))
          .build());
    } catch (RuntimeException e) {
      // Fenced or failed: the lease then simply runs out.
    }
  }

  private void writeFinal(String key, String token, String state, String status, String set,
      Map<String, AttributeValue> values) {
    try {
      dynamoDb.updateItem(UpdateItemRequest.builder().tableName(table).key(Map.of("pk", s(key)))
          .updateExpression(set)
          .conditionExpression("#state = :inprog AND claimToken = :token")
          .expressionAttributeNames(Map.of("#state", "state", "#status", "status"))
          .expressionAttributeValues(values)
          .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD)
          .build());
    } catch (ConditionalCheckFailedException refused) {
      // A retry of a write that took effect (its response was lost) finds its own result.
      Map<String, AttributeValue> old = refused.hasItem() && !refused.item().isEmpty() ? refused.item() : read(key);
      if (old == null || !token.equals(str(old, "claimToken")) || !state.equals(str(old, "state"))
          || !status.equals(str(old, "status"))) {
        throw new FencedException(key);
      }
    }
  }

  private HashMap<String, AttributeValue> finalValues(String token, String state, String status, long now) {
    var values = new HashMap<String, AttributeValue>();
    values.put(":inprog", s("IN_PROGRESS"));
    values.put(":token", s(token));
    values.put(":final", s(state));
    values.put(":status", s(status));
    values.put(":now", n(now));
    values.put(":exp", n(now / 1000 + retentionSeconds));
    return values;
  }

  private Map<String, AttributeValue> read(String key) {
    var item = dynamoDb.getItem(GetItemRequest.builder().tableName(table).key(Map.of("pk", s(key)))
        .consistentRead(true).build());
    return item.hasItem() ? item.item() : null;
  }

  private static String str(Map<String, AttributeValue> item, String name) {
    AttributeValue v = item.get(name);
    return v == null ? null : v.s();
  }

  private static AttributeValue s(String v) {
    return AttributeValue.fromS(v);
  }

  private static AttributeValue n(long v) {
    return AttributeValue.fromN(Long.toString(v));
  }

  private static byte[] bytes(int n) {
    byte[] b = new byte[n];
    RANDOM.nextBytes(b);
    return b;
  }
}
