/*
 * claim.pml - the claim protocol of docs/design.md section 3, for one key, checked with spin.
 * How to run it and what each property means: docs/model-check.md. model/run.sh runs every
 * property of the correct model and confirms that every BROKEN_* variant below is caught.
 *
 * Actors
 *   store   one item; every write is one atomic step that evaluates DESIGN's condition
 *   queue   three messages for the same key: 1 and 2 carry the same payload (a producer
 *           duplicate), 3 a different payload; at-least-once: any message not yet deleted may
 *           be delivered to any idle worker at any moment, also while another worker is
 *           still handling it (visibility expiry under a slow worker, or a plain SQS duplicate)
 *   workers NW of them; each may crash between any two steps (and restarts idle); any store
 *           write may be applied while its response is lost (the worker retries the same
 *           request, same token); the bank may fail transiently or commit and then time out
 *   bank    applies a debit at most once per idempotency key (the chargeId), answers a
 *           replay with the original result and a different body with 409; counts attempts
 *   clock   time is kept relative to "now": `left` = leaseUntil - now + 1, floored at 0, so
 *           a tick (now += 1) decrements every lease; live iff leaseUntil >= now iff left > 0
 *
 * Variants (compile with -D<NAME>; each must make one property fail):
 *   BROKEN_NO_TOKEN_FENCE   complete/fail conditioned on state = IN_PROGRESS only
 *   BROKEN_NO_LEASE_ARM     claim without "leaseUntil < :now": a crashed holder blocks forever
 *   BROKEN_NO_PAYLOAD_CHECK claim without "payloadHash = :h"
 *   BROKEN_ACK_IN_PROGRESS  DUPLICATE_IN_PROGRESS is acked instead of retried later
 *   BROKEN_LEASE_LE         lease arm "leaseUntil <= :now" (off by one: reclaims a live lease)
 *   BROKEN_CLAIM_ANY_STATE  claim without "state = IN_PROGRESS": a DONE key is reclaimed
 *   BROKEN_BANK_NO_DEDUPE   a bank that ignores the idempotency key (the crash window shows)
 * LIVENESS adds the moment "crashes stop" (calm) for the liveness check; safety runs leave it
 * out because calm only removes behaviour. NOSYM turns the symmetry reduction off (readable
 * trails); -DNW=2 / -DNM=2 shrink the model (two workers; one message per payload).
 */

#ifndef NW
#define NW 3 /* workers: 2 or 3 */
#endif
#ifndef NM
#define NM 3 /* messages: 2 or 3; message NM has the different payload */
#endif
#define LEASE 2 /* value of `left` right after a claim or an extend: leaseUntil = now + 1 tick */

/* record state */
#define NONE   0 /* attribute_not_exists(pk) */
#define INPROG 1
#define DONE   2
#define FAILED 3

/* worker program counter: the next step the worker takes */
#define IDLE     0 /* waiting for a delivery */
#define CLAIM    1 /* claim (again, after a lost response) */
#define EFFECT   2 /* ACQUIRED: heartbeat and/or debit */
#define COMPLETE 3 /* debit answered OK: complete(DEBITED), then ack */
#define FAIL     4 /* debit answered 4xx: fail(reason), then DLQ and ack */

mtype = { complete, fail }

#define PAY(m) ((m) == NM -> 2 : 1)

/* ---- the store: one item ---- */
byte st = NONE;
byte left;  /* 0 = expired (leaseUntil < now); 1 = leaseUntil == now; 2 = one tick to go */
byte tok;   /* claimToken; 0 = none */
byte ph;    /* payloadHash */

/* ---- the queue ---- */
bool gone[NM + 1]; /* deleted from the source queue (index 1..NM) */
bool dlq[NM + 1];  /* forwarded to the DLQ by the consumer */

/* ---- the bank ---- */
bool applied;  /* a debit for this idempotency key exists */
byte bank_ph;  /* the body it was applied with */
byte moved;    /* times money moved (saturates at 2) */
byte attempts; /* debit calls (saturates at 2) */

/* ---- workers ---- */
byte pc[NW];
byte wm[NW]; /* message in hand, 0 = none */
byte wt[NW]; /* token of the current delivery, 0 = none */
byte lv[NW]; /* the worker's own view of its claim: 0 = none or expired, else like `left` */
bool ext[NW]; /* heartbeat already sent in this delivery (an effect is finite) */

/* ---- ghosts: history the properties need, never read by the protocol ---- */
byte key_ph;    /* payload of the first successful claim */
byte fin;       /* first final state written, 0 before */
bool bad_write; /* a complete/fail took effect for a token that is not the holder's */
bool bad_debit; /* a debit was attempted with a payload other than the key's */
bool calm;      /* from here on: no crash, no lost response, no transient failure */

byte cand; /* scratch, always 0 between steps */
byte tmap[NW + 2]; /* scratch for relabelling tokens, all 0 between steps */

#define FINAL (st == DONE || st == FAILED)
#define LOSSY (!calm)
#define HANDLES(w, m) (pc[w] != IDLE && wm[w] == m)
#define TOKEN_LIVE(w) (pc[w] != IDLE && wt[w] == tok)
#if NW == 3
#define TWO_LIVE (lv[0] && lv[1] || lv[0] && lv[2] || lv[1] && lv[2])
#define HELD(m) (HANDLES(0, m) || HANDLES(1, m) || HANDLES(2, m))
#define HOLDER_RUNNING (TOKEN_LIVE(0) || TOKEN_LIVE(1) || TOKEN_LIVE(2))
#define TOKEN_USED(t) (t == tok || t == wt[0] || t == wt[1] || t == wt[2])
#else
#define TWO_LIVE (lv[0] && lv[1])
#define HELD(m) (HANDLES(0, m) || HANDLES(1, m))
#define HOLDER_RUNNING (TOKEN_LIVE(0) || TOKEN_LIVE(1))
#define TOKEN_USED(t) (t == tok || t == wt[0] || t == wt[1])
#endif
#define LEFT_QUEUE(m) (!gone[m] || FINAL || dlq[m])
#if NM == 3
#define ALL_GONE (gone[1] && gone[2] && gone[3])
#define ACKS_OK (LEFT_QUEUE(1) && LEFT_QUEUE(2) && LEFT_QUEUE(3))
#else
#define ALL_GONE (gone[1] && gone[2])
#define ACKS_OK (LEFT_QUEUE(1) && LEFT_QUEUE(2))
#endif

/* ---- the conditions of DESIGN section 3, and the broken variants ---- */
#if defined(BROKEN_NO_LEASE_ARM)
#define LEASE_ARM false
#elif defined(BROKEN_LEASE_LE)
#define LEASE_ARM (left <= 1)
#else
#define LEASE_ARM (left == 0) /* leaseUntil < :now */
#endif

#ifdef BROKEN_NO_PAYLOAD_CHECK
#define PAYLOAD_ARM(w) true
#else
#define PAYLOAD_ARM(w) (ph == PAY(wm[w]))
#endif

#ifdef BROKEN_CLAIM_ANY_STATE
#define STATE_ARM (st != NONE)
#else
#define STATE_ARM (st == INPROG)
#endif

#define CLAIM_COND(w) (st == NONE || STATE_ARM && PAYLOAD_ARM(w) && (LEASE_ARM || tok == wt[w]))

#ifdef BROKEN_NO_TOKEN_FENCE
#define FENCE_COND(w) (st == INPROG)
#else
#define FENCE_COND(w) (st == INPROG && tok == wt[w])
#endif

#ifdef BROKEN_BANK_NO_DEDUPE
#define BANK_KNOWS_KEY false
#else
#define BANK_KNOWS_KEY applied
#endif

#define SAT_INC(x) x = (x < 2 -> x + 1 : 2)

inline go_idle(w) {
  pc[w] = IDLE; wm[w] = 0; wt[w] = 0; lv[w] = 0; ext[w] = 0
}

/* Queue actions end the delivery. A crash (or a lost request) just before them is the other
   branch: the message stays and comes back. */
inline ack(w) {
  if
  :: gone[wm[w]] = 1; printf("MSC: W%d deletes m%d\n", w, wm[w])
  :: LOSSY -> printf("MSC: W%d crashes before deleting m%d\n", w, wm[w])
  fi;
  go_idle(w)
}

inline dead_letter(w) {
  if
  :: dlq[wm[w]] = 1; gone[wm[w]] = 1; printf("MSC: W%d forwards m%d to the DLQ, deletes it\n", w, wm[w])
  :: LOSSY -> dlq[wm[w]] = 1; printf("MSC: W%d forwards m%d to the DLQ, crashes\n", w, wm[w])
  :: LOSSY -> printf("MSC: W%d crashes before the DLQ\n", w)
  fi;
  go_idle(w)
}

/* a token no one else can hold: tokens are only ever compared, so the lowest free is as good
   as a random one */
inline fresh_token(w) {
  cand = 1;
  do
  :: TOKEN_USED(cand) -> cand++
  :: else -> break
  od;
  wt[w] = cand;
  cand = 0
}

/* Symmetry reduction (-DNOSYM turns it off so that trails keep their worker numbers).
   Tokens are only ever compared, so relabelling them by first appearance loses nothing.
   Workers are identical, keep all their state in the arrays above and are always at the loop
   head between atomic steps, so sorting their rows only permutes process identities; every
   property is invariant under both. Liveness runs relabel tokens but never sort workers,
   because weak fairness is tracked per process. */
#define WKEY(w) (pc[w] * 64 + wm[w] * 16 + lv[w] * 4 + ext[w] * 2 + (wt[w] == tok))
inline swap_rows(a, b) {
  cand = pc[a]; pc[a] = pc[b]; pc[b] = cand;
  cand = wm[a]; wm[a] = wm[b]; wm[b] = cand;
  cand = wt[a]; wt[a] = wt[b]; wt[b] = cand;
  cand = lv[a]; lv[a] = lv[b]; lv[b] = cand;
  cand = ext[a]; ext[a] = ext[b]; ext[b] = cand;
  cand = 0
}
inline order(a, b) {
  if
  :: WKEY(a) > WKEY(b) -> swap_rows(a, b)
  :: else
  fi
}
inline relabel(x) {
  if
  :: x != 0 && tmap[x] == 0 -> cand++; tmap[x] = cand
  :: else
  fi
}
inline normalize() {
#ifdef NOSYM
  skip
#else
#ifndef LIVENESS
  order(0, 1);
#if NW == 3
  order(1, 2); order(0, 1);
#endif
#endif
  relabel(tok); relabel(wt[0]); relabel(wt[1]);
#if NW == 3
  relabel(wt[2]);
#endif
  tok = tmap[tok]; wt[0] = tmap[wt[0]]; wt[1] = tmap[wt[1]];
#if NW == 3
  wt[2] = tmap[wt[2]];
#endif
  cand = 0; tmap[1] = 0; tmap[2] = 0; tmap[3] = 0;
#if NW == 3
  tmap[4] = 0;
#endif
#endif
}

inline receive(w, m) {
  atomic {
    pc[w] == IDLE && !gone[m] && (!calm || !HELD(m)) ->
    wm[w] = m; fresh_token(w); pc[w] = CLAIM;
    printf("MSC: W%d receives m%d (payload %d), token %d\n", w, m, PAY(m), wt[w]);
    normalize()
  }
}

/* The claim condition fails: the old item (ALL_OLD) decides, as classify_refusal does. */
inline refused(w) {
  if
  :: ph != PAY(wm[w]) -> printf("MSC: W%d claim -> PAYLOAD_MISMATCH\n", w); dead_letter(w)
  :: else ->
     if
     :: st == DONE -> printf("MSC: W%d claim -> DUPLICATE_DONE\n", w); ack(w)
     :: st == FAILED -> printf("MSC: W%d claim -> DUPLICATE_FAILED\n", w); dead_letter(w)
     :: st == INPROG ->
        printf("MSC: W%d claim -> DUPLICATE_IN_PROGRESS\n", w);
#ifdef BROKEN_ACK_IN_PROGRESS
        ack(w)
#else
        go_idle(w) /* no ack: visible again when the lease ends */
#endif
     fi
  fi
}

inline claim(w) {
  atomic {
    pc[w] == CLAIM ->
    if
    :: CLAIM_COND(w) ->
       st = INPROG; tok = wt[w]; ph = PAY(wm[w]); left = LEASE;
       if
       :: key_ph == 0 -> key_ph = ph
       :: else
       fi;
       if
       :: lv[w] = LEASE; pc[w] = EFFECT; printf("MSC: W%d claim -> ACQUIRED\n", w)
       :: LOSSY -> printf("MSC: W%d claim applied, response lost; retries\n", w)
       fi
    :: else -> refused(w)
    fi;
    normalize()
  }
}

inline heartbeat(w) {
  atomic {
    pc[w] == EFFECT && !ext[w] -> ext[w] = 1;
    if
    :: st == INPROG && tok == wt[w] ->
       left = LEASE;
       if
       :: lv[w] = LEASE; printf("MSC: W%d extend -> WRITTEN\n", w)
       :: LOSSY -> printf("MSC: W%d extend applied, response lost\n", w)
       fi
    :: else -> printf("MSC: W%d extend -> FENCED\n", w) /* the heartbeat stops */
    fi;
    normalize()
  }
}

/* after a transient debit failure: release (token-fenced), no ack */
inline release(w) {
  if
  :: st == INPROG && tok == wt[w] -> left = 0; printf("MSC: W%d release, no ack\n", w)
  :: else -> printf("MSC: W%d release -> FENCED, no ack\n", w)
  :: LOSSY -> printf("MSC: W%d crashes before release\n", w)
  fi;
  go_idle(w)
}

inline bank_applies(w) {
  applied = 1; bank_ph = PAY(wm[w]); SAT_INC(moved)
}

inline debit(w) {
  atomic {
    pc[w] == EFFECT ->
    SAT_INC(attempts);
    bad_debit = bad_debit || PAY(wm[w]) != key_ph;
    if
    :: !BANK_KNOWS_KEY ->
       if
       :: bank_applies(w); pc[w] = COMPLETE; printf("MSC: W%d debit -> 201 applied\n", w)
       :: pc[w] = FAIL; printf("MSC: W%d debit -> 422 permanent\n", w)
       :: LOSSY -> printf("MSC: W%d debit -> 5xx\n", w); release(w)
       :: LOSSY -> bank_applies(w); printf("MSC: W%d debit applied, then timeout\n", w);
          release(w)
       fi
    :: BANK_KNOWS_KEY && bank_ph == PAY(wm[w]) ->
       if
       :: pc[w] = COMPLETE; printf("MSC: W%d debit -> 200 replay\n", w)
       :: LOSSY -> printf("MSC: W%d debit replay -> 5xx\n", w); release(w)
       fi
    :: BANK_KNOWS_KEY && bank_ph != PAY(wm[w]) ->
       pc[w] = FAIL; printf("MSC: W%d debit -> 409 other body\n", w)
    fi;
    normalize()
  }
}

/* complete (to = DONE, then ack) or fail (to = FAILED, then DLQ and ack) */
inline finish(w, from, to, op) {
  atomic {
    pc[w] == from ->
    if
    :: FENCE_COND(w) ->
       bad_write = bad_write || wt[w] != tok; /* only a claim sets tok: tok is the holder's */
       st = to;
       if
       :: fin == 0 -> fin = to
       :: else
       fi;
       if
       :: printf("MSC: W%d %e -> WRITTEN\n", w, op); lv[w] = 0;
          if
          :: to == DONE -> ack(w)
          :: else -> dead_letter(w)
          fi
       :: LOSSY -> printf("MSC: W%d %e applied, response lost; retries\n", w, op)
       fi
    :: else ->
       if
       :: FINAL && tok == wt[w] -> /* ALL_OLD is final with our token: our own earlier write */
          printf("MSC: W%d %e -> own earlier write: WRITTEN\n", w, op);
          if
          :: to == DONE -> ack(w)
          :: else -> dead_letter(w)
          fi
       :: else -> printf("MSC: W%d %e -> FENCED, no ack\n", w, op); go_idle(w)
       fi
    fi;
    normalize()
  }
}

active [NW] proctype worker() {
end:
  do
  :: receive(_pid, 1)
  :: receive(_pid, 2)
#if NM == 3
  :: receive(_pid, 3)
#endif
  :: claim(_pid)
  :: heartbeat(_pid)
  :: debit(_pid)
  :: finish(_pid, COMPLETE, DONE, complete)
  :: finish(_pid, FAIL, FAILED, fail)
  :: atomic {
       LOSSY && pc[_pid] != IDLE -> printf("MSC: W%d crashes\n", _pid); go_idle(_pid); normalize()
     }
  od
}

/* now += 1, when it changes anything. Once calm, a live holder is never overtaken by its lease (its effect fits in the
   lease, as the heartbeat ensures in production); abandoned leases still run out. */
inline decrement(x) {
  if
  :: x > 0 -> x--
  :: else
  fi
}

#if NW == 3
#define TIME_MATTERS (left || lv[0] || lv[1] || lv[2])
#else
#define TIME_MATTERS (left || lv[0] || lv[1])
#endif

active proctype clock() {
end:
  do
  :: atomic {
       TIME_MATTERS && (!calm || !(st == INPROG && left == 1 && HOLDER_RUNNING)) ->
       decrement(left); decrement(lv[0]); decrement(lv[1]);
#if NW == 3
       decrement(lv[2]);
#endif
       printf("MSC: tick: record leaseUntil - now = %d (live while >= 0)\n", left - 1);
       normalize()
     }
#ifdef LIVENESS
  :: atomic { !calm -> calm = 1; printf("MSC: crashes and faults stop\n") }
#endif
  od
}

/* ---- properties ---- */
ltl one_live_claim { [] !TWO_LIVE }
ltl holder_writes { [] !bad_write }
ltl final_is_final { [] (fin == 0 || st == fin) }
ltl money_once { [] (moved <= 1) }
ltl payload_match { [] !bad_debit }
ltl ack_after_final { [] ACKS_OK }
/* witness, expected to FAIL: the correct protocol calls the debit twice for one key (after a
   transient failure or in the crash window of DESIGN section 2): the bank's dedupe is needed */
ltl single_attempt { [] (attempts <= 1) }
ltl settles { (<> calm) -> (<> (FINAL && ALL_GONE)) }
