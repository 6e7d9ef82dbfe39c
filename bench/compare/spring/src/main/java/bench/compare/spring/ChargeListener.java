package bench.compare.spring;

import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import io.awspring.cloud.sqs.annotation.SqsListener;
import io.awspring.cloud.sqs.listener.Visibility;
import io.awspring.cloud.sqs.operations.SqsTemplate;
import jakarta.validation.ConstraintViolation;
import jakarta.validation.Validator;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.messaging.handler.annotation.Payload;
import org.springframework.stereotype.Component;

/**
 * The consumer's design (docs/design.md §3) on Spring Cloud AWS: the container long-polls the
 * queue (10 messages, 20 s) and runs this listener on up to WORKERS (32) messages at once; a
 * message is deleted (in batches, the container's default acknowledgement) when the listener
 * returns, and stays on the queue when it throws. Per message: validate, claim the chargeId in
 * DynamoDB, debit with `Idempotency-Key: <chargeId>`, notify with `<chargeId>:notify`, record the
 * result with a second conditional write, return. A duplicate of a finished charge returns at
 * once (acknowledged, no debit); a different payload under a known chargeId, an invalid body and
 * a refused debit go to the DLQ with a failureReason attribute and are acknowledged. A live claim
 * held elsewhere, an unavailable bank or store, a fenced final write: the listener throws, and the
 * message comes back (a claimed duplicate after the holder's lease).
 *
 * <p>Not here: ours has a heartbeat that extends lease and visibility for effects longer than
 * half a lease; these calls time out after 10 s against a 60 s lease, and the bench's effects
 * take milliseconds.
 */
@Component
public class ChargeListener {

  private static final Logger log = LoggerFactory.getLogger(ChargeListener.class);

  private final ClaimStore store;
  private final Bank bank;
  private final SqsTemplate sqs;
  private final Validator validator;
  private final ObjectReader reader;
  private final String dlqUrl;

  public ChargeListener(ClaimStore store, Bank bank, SqsTemplate sqs, Validator validator, ObjectMapper mapper,
      @Value("${CHARGE_DLQ_URL:}") String dlqUrl) {
    this.store = store;
    this.bank = bank;
    this.sqs = sqs;
    this.validator = validator;
    // Boot's ObjectMapper (unknown fields ignored, java.time), stricter where the design is:
    // no float for an integer, no key given twice.
    this.reader = mapper.readerFor(ChargeDueEvent.class)
        .without(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
        .with(StreamReadFeature.STRICT_DUPLICATE_DETECTION);
    this.dlqUrl = dlqUrl;
  }

  @SqsListener("${CHARGE_QUEUE_URL}")
  public void onCharge(@Payload String body, Visibility visibility) {
    ChargeDueEvent charge;
    try {
      charge = reader.readValue(body);
    } catch (Exception e) {
      deadLetter(body, "INVALID_MESSAGE", "malformed: " + e.getClass().getSimpleName(), null);
      return;
    }
    Set<ConstraintViolation<ChargeDueEvent>> violations = validator.validate(charge);
    if (!violations.isEmpty()) {
      String detail = violations.stream().map(v -> v.getPropertyPath() + ": " + v.getMessage())
          .sorted().collect(Collectors.joining("; "));
      deadLetter(body, "INVALID_MESSAGE", detail, null);
      return;
    }
    String key = charge.chargeId();
    String canonical = charge.canonical();
    String hash = sha256(canonical);
    ClaimStore.Claim claim = store.claim(key, hash);
    switch (claim.outcome()) {
      case DUPLICATE_DONE -> {
        log.info("claim decided chargeId={} outcome=DUPLICATE_DONE", key);
        return;
      }
      case DUPLICATE_FAILED -> {
        deadLetter(body, "PREVIOUSLY_FAILED", "charge already failed permanently", key);
        return;
      }
      case PAYLOAD_MISMATCH -> {
        deadLetter(body, "PAYLOAD_MISMATCH",
            "payload differs (recorded " + claim.recordedHash() + ", received " + hash + ")", key);
        return;
      }
      case DUPLICATE_IN_PROGRESS -> {
        log.info("claim decided chargeId={} outcome=DUPLICATE_IN_PROGRESS", key);
        long remaining = Math.max(1, (claim.leaseUntil() - System.currentTimeMillis() + 999) / 1000);
        visibility.changeTo((int) Math.min(remaining, 43_200));
        throw new IllegalStateException("claim held elsewhere: " + key);
      }
      case ACQUIRED -> settle(charge, claim.token(), canonical);
    }
  }

  private void settle(ChargeDueEvent charge, String token, String canonical) {
    String key = charge.chargeId();
    Bank.Debit debit = bank.debit(charge);
    if (debit instanceof Bank.Debited debited) {
      boolean notified = bank.notify(charge, debited.debitId());
      String status = notified ? "DEBITED" : "DEBITED_NOTIFICATION_FAILED";
      store.complete(key, token, status, debited.debitId(), canonical); // throws when fenced: no ack
      log.info("charge settled chargeId={} status={} debitId={}", key, status, debited.debitId());
    } else if (debit instanceof Bank.Refused refused) {
      store.fail(key, token, refused.code(), canonical);
      deadLetter(charge.toString(), "PERMANENT_DEBIT_FAILURE", "bank refused the debit: " + refused.code(), key);
    } else {
      store.release(key, token);
      throw new IllegalStateException("debit unavailable for " + key + ": " + ((Bank.Unavailable) debit).why());
    }
  }

  private void deadLetter(String body, String reason, String detail, String chargeId) {
    log.error("dead-lettered failureReason={} chargeId={} failureDetail={}", reason, chargeId, detail);
    if (dlqUrl.isEmpty()) return;
    String bounded = detail.length() > 256 ? detail.substring(0, 256) : detail;
    sqs.send(to -> {
      to.queue(dlqUrl).payload(body).header("failureReason", reason).header("failureDetail", bounded);
      if (chargeId != null) to.header("chargeId", chargeId);
    });
  }

  private static String sha256(String canonical) {
    try {
      return HexFormat.of().formatHex(
          MessageDigest.getInstance("SHA-256").digest(canonical.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
