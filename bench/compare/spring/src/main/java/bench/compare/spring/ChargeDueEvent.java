package bench.compare.spring;

import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import java.time.LocalDate;

/**
 * ChargeDueEvent v1 (docs/design.md §5) with its rules as Bean Validation constraints. The
 * currency is checked for shape only (ours checks the ISO 4217 list); dueDate must be a real
 * calendar date (Jackson's LocalDate).
 */
public record ChargeDueEvent(
    @NotNull @Min(1) @Max(1) Integer schemaVersion,
    @NotNull @Pattern(regexp = "[A-Za-z0-9._:-]{1,128}") String chargeId,
    @NotNull @Pattern(regexp = "[A-Za-z0-9._:-]{1,64}") String accountId,
    @NotNull @Pattern(regexp = "[A-Z0-9_]{1,64}") String chargeType,
    @NotNull @Min(1) @Max(1_000_000_000_000L) Long amountMinor,
    @NotNull @Pattern(regexp = "[A-Z]{3}") String currency,
    @NotNull LocalDate dueDate) {

  /** The canonical form whose SHA-256 is the payloadHash (docs/design.md §5). */
  String canonical() {
    return "v1|" + chargeId + "|" + accountId + "|" + chargeType + "|" + amountMinor + "|" + currency + "|" + dueDate;
  }
}
