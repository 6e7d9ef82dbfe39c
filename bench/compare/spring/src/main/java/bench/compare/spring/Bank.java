package bench.compare.spring;

import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestClientException;

/** The core-banking and notification calls of docs/design.md §5 through RestClient. */
@Component
public class Bank {

  /** The debit's answer: debited (with the bank's id), refused for good, or unavailable. */
  public sealed interface Debit {}

  public record Debited(String debitId) implements Debit {}

  public record Refused(String code) implements Debit {}

  public record Unavailable(String why) implements Debit {}

  private final RestClient bank;
  private final RestClient notifications;

  public Bank(@Qualifier("bankClient") RestClient bank, @Qualifier("notificationClient") RestClient notifications) {
    this.bank = bank;
    this.notifications = notifications;
  }

  public Debit debit(ChargeDueEvent charge) {
    var body = new LinkedHashMap<String, Object>();
    body.put("chargeId", charge.chargeId());
    body.put("accountId", charge.accountId());
    body.put("amountMinor", charge.amountMinor());
    body.put("currency", charge.currency());
    body.put("chargeType", charge.chargeType());
    try {
      return bank.post().uri("/v1/debits")
          .header("Idempotency-Key", charge.chargeId())
          .contentType(MediaType.APPLICATION_JSON)
          .body(body)
          .exchange((request, response) -> {
            int status = response.getStatusCode().value();
            if (status == 409 || status == 422) {
              Map<?, ?> reply = response.bodyTo(Map.class);
              Object code = reply == null ? null : reply.get("code");
              return new Refused(code instanceof String c && c.matches("[A-Z0-9_]{1,64}") ? c
                  : status == 409 ? "IDEMPOTENCY_KEY_CONFLICT" : "UNPROCESSABLE");
            }
            if (status == 200 || status == 201) {
              Map<?, ?> reply = response.bodyTo(Map.class);
              Object id = reply == null ? null : reply.get("debitId");
              if (id instanceof String debitId && !debitId.isEmpty() && debitId.length() <= 128) {
                return new Debited(debitId);
              }
            }
            return new Unavailable("debit answered " + status);
          });
    } catch (RestClientException e) {
      return new Unavailable(e.getMessage());
    }
  }

  /** True when the notification service answered 2xx. */
  public boolean notify(ChargeDueEvent charge, String debitId) {
    var body = new LinkedHashMap<String, Object>();
    body.put("chargeId", charge.chargeId());
    body.put("accountId", charge.accountId());
    body.put("debitId", debitId);
    body.put("amountMinor", charge.amountMinor());
    body.put("currency", charge.currency());
    body.put("chargeType", charge.chargeType());
    try {
      return notifications.post().uri("/v1/notifications")
          .header("Idempotency-Key", charge.chargeId() + ":notify")
          .contentType(MediaType.APPLICATION_JSON)
          .body(body)
          .exchange((request, response) -> response.getStatusCode().is2xxSuccessful());
    } catch (RestClientException e) {
      return false;
    }
  }
}
