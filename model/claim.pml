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
 * HORIZON: the bank's memory of keys expires (docs/design.md section 3, "The bank's memory of
 * keys"). The first claim writes firstAttemptAt (`fa`); at some moment after it the record
 * becomes older than the window minus the margin (`fa_old`, an action of the clock), and only
 * then may the bank forget the key (`applied` = 0, the money it moved stays moved). A worker
 * about to send the debit that finds `fa_old` does not send it: it fails the key with
 * DEBIT_UNCERTAIN, dead-letters the message and acks. The check and the POST are one step:
 * the margin covers the time between them (docs/design.md).
 *   BROKEN_NO_HORIZON_GUARD with HORIZON: the debit is sent again whatever the record's age
 *                           (the code before issue 35)
 * LIVENESS adds the moment "crashes stop" (calm) for the liveness check; safety runs leave it
 * out because calm only removes behaviour. NOSYM turns the symmetry reduction off (readable
 * trails); -DNW=2 / -DNM=2 shrink the model (two workers; one message per payload).
 *
 * EXT: the parts the code grew after the first design (docs/model-check.md, "Extended model").
 * Without EXT the model is exactly the first one above, so its checks keep their numbers.
 *   heartbeat  the HeartbeatScheduler thread (an action of the `env` process) that, from
 *              ACQUIRED until the worker stops it just before its final write (or release),
 *              also while the notification is sent, extends the claim
 *              (state = IN_PROGRESS AND claimToken = :token -> leaseUntil = own now + lease)
 *              and then the message's visibility, each time half the lease has passed on the
 *              holder's own clock; it stops for good when an extension is refused, fails or
 *              loses its reply (DeliveryHeartbeat's tick returns false)
 *   lease      LTICKS ticks (even, default 2), so the heartbeat is due every HALF = LTICKS/2
 *   clocks     worker w reads now_w = true time + off[w], off[w] in 0..SKEW chosen once per
 *              worker (only differences matter); it writes leaseUntil = now_w + lease and
 *              reclaims when leaseUntil < now_w; the store keeps `left` in true time
 *   HBLATE=d   a heartbeat extension lands at most d ticks after it is due (scheduler delay
 *              plus request time); without HBLATE a heartbeat may be arbitrarily late
 *   ANYCLOCK   no time at all: every claim decides "leaseUntil < :now" nondeterministically,
 *              which covers any skew, drift or clock step; one_live_claim is not defined
 *   visibility any message not deleted may be delivered at any moment, before and after calm:
 *              every visibility schedule (hide until the lease ends, an adaptive re-check,
 *              0 on shutdown, heartbeat extensions) is one of these schedules
 *   shutdown   a worker that has a message but no claim yet hands it back (visibility 0)
 *   operator   reopen: conditional on FAILED, writes IN_PROGRESS with an expired lease and a
 *              token no worker holds, so the next delivery with the same payload claims it;
 *              redrive: a message the consumer dead-lettered goes back to the source queue;
 *              NO_OPERATOR leaves both out (a smaller model for the three-worker liveness run)
 * EXT variants, each must make one property fail:
 *   BROKEN_EXTEND_NO_TOKEN  the heartbeat's extend conditioned on state = IN_PROGRESS only
 *   BROKEN_ACK_RECHECK      a re-check (second delivery of a copy hidden as an in-progress
 *                           duplicate) that sees IN_PROGRESS again acks the copy
 *   BROKEN_REOPEN_ANY_STATE reopen without the condition state = FAILED
 *   (skew beyond the bound is not a code variant: run.sh sets SKEW and HBLATE past it)
 * In the extended model a worker holds a live claim (lv > 0, one_live_claim) from its ACQUIRED
 * answer until its own clock passes the leaseUntil of its last acknowledged claim or extension,
 * until a heartbeat of its fails (it no longer knows its lease), or until its final write lands.
 */

#ifndef NW
#define NW 3 /* workers: 2 or 3 */
#endif
#ifndef NM
#define NM 3 /* messages: 2 or 3; message NM has the different payload */
#endif
#ifdef EXT
#ifdef ANYCLOCK
#define NOTIME
#endif
#ifndef LTICKS
#define LTICKS 2 /* lease in ticks; even, at most 4 */
#endif
#ifndef SKEW
#define SKEW 0 /* largest difference between two workers' clocks, in ticks; at most 6 */
#endif
#define HALF (LTICKS / 2) /* the heartbeat period */
#define LEASE (LTICKS + 1) /* value of `lv` (and of `left` - off) right after a claim or extend */
#define UNSET (SKEW + 1)   /* off[w] before worker w first needs its clock */
#else
#define LEASE 2 /* value of `left` right after a claim or an extend: leaseUntil = now + 1 tick */
#endif

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
#ifndef NOTIME
byte left;  /* 0 = expired (leaseUntil < now); 1 = leaseUntil == now; 2 = one tick to go */
#endif
byte tok;   /* claimToken; 0 = none (and, after a reopen, a token no worker holds) */
byte ph;    /* payloadHash */

/* ---- the queue ---- */
bool gone[NM + 1]; /* deleted from the source queue (index 1..NM) */
bool dlq[NM + 1];  /* forwarded to the DLQ by the consumer */
#ifdef BROKEN_ACK_RECHECK
bool seen_ip[NM + 1]; /* this copy was already handed back as an in-progress duplicate */
#endif

/* ---- the bank ---- */
bool applied;  /* a debit for this idempotency key exists */
byte bank_ph;  /* the body it was applied with */
byte moved;    /* times money moved (saturates at 2) */
byte attempts; /* debit calls (saturates at 2) */

#ifdef HORIZON
bool fa;     /* the record's firstAttemptAt is set (by the first claim, if_not_exists) */
bool fa_old; /* now + margin >= firstAttemptAt + window: the bank may forget the key */
#endif

/* ---- workers ---- */
byte pc[NW];
byte wm[NW]; /* message in hand, 0 = none */
byte wt[NW]; /* token of the current delivery, 0 = none */
#ifndef NOTIME
byte lv[NW]; /* the worker's own view of its claim: 0 = none or expired, else like `left` */
#endif
#ifdef EXT
bool hbon[NW]; /* the delivery's heartbeat is scheduled (started, not stopped or failed) */
#if SKEW > 0
byte off[NW] = UNSET; /* clock offset: now_w = true time + off[w] */
#endif
#else
bool ext[NW]; /* heartbeat already sent in this delivery (an effect is finite) */
#endif


/* ---- ghosts: history the properties need, never read by the protocol ---- */
byte key_ph;    /* payload of the first successful claim */
byte fin;       /* first final state written, 0 before (and again after an audited reopen) */
bool bad_write; /* a token-fenced write took effect for a token that is not the holder's */
bool bad_debit; /* a debit was attempted with a payload other than the key's */
bool calm;      /* from here on: no crash, no lost response, no transient failure */
#ifdef EXT
bool reopen_due; /* the operator reopened the key and no final write has landed since */
#endif

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
/* a claim nobody will finish: IN_PROGRESS under a token no running worker holds, and no
   message for the key left in the source queue to bring a worker back to it */
#define ORPHAN (st == INPROG && tok != 0 && ALL_GONE && !HOLDER_RUNNING)

/* ---- the conditions of DESIGN section 3, and the broken variants ---- */
#if defined(EXT)
#if SKEW > 0
#define OFF(w) off[w]
#else
#define OFF(w) 0
#endif
#define LEASE_ARM(w) (left <= OFF(w)) /* leaseUntil < now_w: left - 1 < off[w] */
#elif defined(BROKEN_NO_LEASE_ARM)
#define LEASE_ARM(w) false
#elif defined(BROKEN_LEASE_LE)
#define LEASE_ARM(w) (left <= 1)
#else
#define LEASE_ARM(w) (left == 0) /* leaseUntil < :now */
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

#define CLAIM_COND(w) (st == NONE || STATE_ARM && PAYLOAD_ARM(w) && (LEASE_ARM(w) || tok == wt[w]))
#ifdef NOTIME
/* the lease arm is unknown: the claim may succeed whenever it would with an expired lease */
#define CLAIM_SURE(w) (st == NONE || STATE_ARM && PAYLOAD_ARM(w) && tok == wt[w])
#define CAN_ACQUIRE(w) (CLAIM_SURE(w) || STATE_ARM && PAYLOAD_ARM(w))
#define CAN_REFUSE(w) (!CLAIM_SURE(w))
#else
#define CAN_ACQUIRE(w) CLAIM_COND(w)
#define CAN_REFUSE(w) (!CLAIM_COND(w))
#endif

#ifdef BROKEN_NO_TOKEN_FENCE
#define FENCE_COND(w) (st == INPROG)
#else
#define FENCE_COND(w) (st == INPROG && tok == wt[w])
#endif

#ifdef BROKEN_EXTEND_NO_TOKEN
#define EXTEND_COND(w) (st == INPROG)
#else
#define EXTEND_COND(w) (st == INPROG && tok == wt[w])
#endif

#ifdef BROKEN_REOPEN_ANY_STATE
#define REOPEN_COND (st != NONE)
#else
#define REOPEN_COND (st == FAILED)
#endif

#ifdef BROKEN_BANK_NO_DEDUPE
#define BANK_KNOWS_KEY false
#else
#define BANK_KNOWS_KEY applied
#endif

#define SAT_INC(x) x = (x < 2 -> x + 1 : 2)

/* time-dependent statements, empty without time (ANYCLOCK) */
#ifdef NOTIME
#define SET_LV(w, v) skip
#define SET_LEASE(w) skip
#define EXPIRE_LEASE skip
#else
#define SET_LV(w, v) lv[w] = v
#ifdef EXT
#define SET_LEASE(w) left = LEASE + OFF(w)
#else
#define SET_LEASE(w) left = LEASE
#endif
#define EXPIRE_LEASE left = 0
#endif

inline go_idle(w) {
#ifdef EXT
  pc[w] = IDLE; wm[w] = 0; wt[w] = 0; SET_LV(w, 0); hbon[w] = 0
#else
  pc[w] = IDLE; wm[w] = 0; wt[w] = 0; lv[w] = 0; ext[w] = 0
#endif
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
#ifdef EXT
#ifdef NOTIME
#define LVK(w) 0
#else
#define LVK(w) lv[w]
#endif
#if SKEW > 0
#define OFFK(w) off[w]
#else
#define OFFK(w) 0
#endif
#define WKEY(w) (((((pc[w] * 4 + wm[w]) * 8 + LVK(w)) * 2 + hbon[w]) * 2 + (wt[w] == tok)) * 8 + OFFK(w))
inline swap_rows(a, b) {
  cand = pc[a]; pc[a] = pc[b]; pc[b] = cand;
  cand = wm[a]; wm[a] = wm[b]; wm[b] = cand;
  cand = wt[a]; wt[a] = wt[b]; wt[b] = cand;
#ifndef NOTIME
  cand = lv[a]; lv[a] = lv[b]; lv[b] = cand;
#endif
  cand = hbon[a]; hbon[a] = hbon[b]; hbon[b] = cand;
#if SKEW > 0
  cand = off[a]; off[a] = off[b]; off[b] = cand;
#endif
  cand = 0
}
#else
#define WKEY(w) (pc[w] * 64 + wm[w] * 16 + lv[w] * 4 + ext[w] * 2 + (wt[w] == tok))
inline swap_rows(a, b) {
  cand = pc[a]; pc[a] = pc[b]; pc[b] = cand;
  cand = wm[a]; wm[a] = wm[b]; wm[b] = cand;
  cand = wt[a]; wt[a] = wt[b]; wt[b] = cand;
  cand = lv[a]; lv[a] = lv[b]; lv[b] = cand;
  cand = ext[a]; ext[a] = ext[b]; ext[b] = cand;
  cand = 0
}
#endif
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

/* EXT: a worker's clock offset is fixed the first time the worker needs a clock */
#if defined(EXT) && SKEW > 0
inline choose_offset(w) {
  if
  :: off[w] == UNSET ->
     off[w] = 0;
     do
     :: off[w] < SKEW -> off[w]++
     :: break
     od
  :: else
  fi
}
#else
#define choose_offset(w) skip
#endif

#ifdef EXT
#define DELIVERABLE(m) true /* visibility: see the header */
#else
#define DELIVERABLE(m) (!calm || !HELD(m))
#endif

inline receive(w, m) {
  atomic {
    pc[w] == IDLE && !gone[m] && DELIVERABLE(m) ->
#ifdef EXT
    choose_offset(w);
#endif
    wm[w] = m; fresh_token(w); pc[w] = CLAIM;
#if defined(EXT) && SKEW > 0
    printf("MSC: W%d (clock +%d) receives m%d (payload %d), token %d\n", w, off[w], m, PAY(m), wt[w]);
#else
    printf("MSC: W%d receives m%d (payload %d), token %d\n", w, m, PAY(m), wt[w]);
#endif
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
#if defined(BROKEN_ACK_IN_PROGRESS)
        ack(w)
#elif defined(BROKEN_ACK_RECHECK)
        if
        :: seen_ip[wm[w]] -> printf("MSC: W%d re-check saw IN_PROGRESS again: acks\n", w); ack(w)
        :: else -> seen_ip[wm[w]] = 1; go_idle(w)
        fi
#else
        go_idle(w) /* no ack: visible again when the lease ends (or at the next re-check) */
#endif
     fi
  fi
}

#ifndef EXT
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
#ifdef HORIZON
       fa = 1; /* firstAttemptAt = if_not_exists(firstAttemptAt, :now) */
#endif
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
#else /* EXT */
inline claim(w) {
  atomic {
    pc[w] == CLAIM ->
    if
    :: CAN_ACQUIRE(w) ->
       st = INPROG; tok = wt[w]; ph = PAY(wm[w]); SET_LEASE(w);
       if
       :: key_ph == 0 -> key_ph = ph
       :: else
       fi;
       if
       :: SET_LV(w, LEASE); hbon[w] = 1; pc[w] = EFFECT;
          printf("MSC: W%d claim -> ACQUIRED, heartbeat started\n", w)
       :: LOSSY -> printf("MSC: W%d claim applied, response lost; retries\n", w)
       fi
    :: CAN_REFUSE(w) -> refused(w)
    fi;
    normalize()
  }
}

/* One tick of the delivery's heartbeat, on the scheduler thread: extend the claim, and the
   message's visibility when the extension was written. Any failure stops the heartbeat for
   good, and the worker no longer knows its lease: its claim stops counting as live. */
#ifdef NOTIME
#define HB_DUE(w) true
#else
#define HB_DUE(w) (lv[w] <= HALF + 1) /* half the lease has passed on the holder's clock */
#endif
inline heartbeat_tick(w) {
  atomic {
    hbon[w] && HB_DUE(w) ->
    if
    :: EXTEND_COND(w) ->
       bad_write = bad_write || wt[w] != tok;
       SET_LEASE(w);
       if
       :: SET_LV(w, LEASE); printf("MSC: W%d heartbeat: extend -> WRITTEN, visibility extended\n", w)
       :: LOSSY -> hbon[w] = 0; SET_LV(w, 0);
          printf("MSC: W%d heartbeat: extend applied, response lost; heartbeat stops\n", w)
       fi
    :: !EXTEND_COND(w) -> hbon[w] = 0; SET_LV(w, 0);
       printf("MSC: W%d heartbeat: extend -> FENCED; heartbeat stops\n", w)
    :: LOSSY -> hbon[w] = 0; SET_LV(w, 0);
       printf("MSC: W%d heartbeat: extend fails (store error); heartbeat stops\n", w)
    fi;
    normalize()
  }
}

/* after a transient debit failure: stop the heartbeat, release (token-fenced), no ack */
inline release(w) {
  hbon[w] = 0;
  if
  :: st == INPROG && tok == wt[w] -> EXPIRE_LEASE; printf("MSC: W%d release, no ack\n", w)
  :: else -> printf("MSC: W%d release -> FENCED, no ack\n", w)
  :: LOSSY -> printf("MSC: W%d crashes before release\n", w)
  fi;
  go_idle(w)
}
#endif /* EXT */

inline bank_applies(w) {
  applied = 1; bank_ph = PAY(wm[w]); SAT_INC(moved)
}

#if defined(HORIZON) && !defined(BROKEN_NO_HORIZON_GUARD)
#define HORIZON_GUARD
#endif

inline debit(w) {
  atomic {
    pc[w] == EFFECT ->
#ifdef HORIZON_GUARD
    if
    :: fa_old ->
       pc[w] = FAIL; printf("MSC: W%d not sent: past the bank's window -> DEBIT_UNCERTAIN\n", w)
    :: else ->
#endif
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
#ifdef HORIZON_GUARD
    fi;
#endif
    normalize()
  }
}

/* complete (to = DONE, then ack) or fail (to = FAILED, then DLQ and ack) */
inline finish(w, from, to, op) {
  atomic {
    pc[w] == from ->
#ifdef EXT
    hbon[w] = 0; /* HeartbeatScope::stop(), which waits for a running tick, then the write */
#endif
    if
    :: FENCE_COND(w) ->
       bad_write = bad_write || wt[w] != tok; /* only a claim sets tok: tok is the holder's */
       st = to;
       if
       :: fin == 0 -> fin = to
       :: else
       fi;
#ifdef EXT
       SET_LV(w, 0); /* the claim ends when its final write lands, answered or not */
       reopen_due = 0;
#endif
       if
       :: printf("MSC: W%d %e -> WRITTEN\n", w, op);
#ifndef EXT
          lv[w] = 0;
#endif
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
#ifndef EXT
  :: heartbeat(_pid)
#endif
  :: debit(_pid)
  :: finish(_pid, COMPLETE, DONE, complete)
  :: finish(_pid, FAIL, FAILED, fail)
  :: atomic {
       LOSSY && pc[_pid] != IDLE -> printf("MSC: W%d crashes\n", _pid); go_idle(_pid); normalize()
     }
#ifdef EXT
  /* graceful shutdown: a message received but not yet started goes back with visibility 0 */
  :: atomic {
       LOSSY && pc[_pid] == CLAIM ->
       printf("MSC: W%d shuts down, hands m%d back (visibility 0)\n", _pid, wm[_pid]);
       go_idle(_pid); normalize()
     }
#endif
  od
}

/* now += 1, when it changes anything. First model: once calm, a live holder is never overtaken
   by its lease (its effect fits in the lease, as the heartbeat ensures in production);
   abandoned leases still run out. The extended model replaces that assumption by the heartbeat. */
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

#ifndef EXT
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
#ifdef HORIZON
  /* time passes beyond the window minus the margin, then the bank may forget the key */
  :: atomic { fa && !fa_old -> fa_old = 1; printf("MSC: the record's first attempt is now older than the window minus the margin\n") }
  :: atomic { fa_old && applied -> applied = 0; printf("MSC: the bank forgets the key\n") }
#endif
#ifdef LIVENESS
  :: atomic { !calm -> calm = 1; printf("MSC: crashes and faults stop\n") }
#endif
  od
}
#else /* EXT */
/* The clock may not pass the moment a running heartbeat is due plus its allowed lateness:
   HBLATE ticks before calm (unbounded without HBLATE), none after calm. Nothing else holds
   time back: once calm, a running holder keeps its lease only through its heartbeat. */
#ifndef NOTIME
#ifdef HBLATE
#define LATE (calm -> 0 : HBLATE)
#define URGENT(w) (hbon[w] && lv[w] + LATE <= HALF + 1)
#else
#define URGENT(w) (calm && hbon[w] && lv[w] <= HALF + 1)
#endif
#if NW == 3
#define ANY_URGENT (URGENT(0) || URGENT(1) || URGENT(2))
#else
#define ANY_URGENT (URGENT(0) || URGENT(1))
#endif
#endif

/* charge-recovery redrive, racing the consumers; operators stop at calm (NO_OPERATOR: none) */
#ifdef NO_OPERATOR
#define OPERATING false
#else
#define OPERATING LOSSY
#endif
inline redrive(m) {
  atomic {
    OPERATING && gone[m] && dlq[m] ->
    gone[m] = 0; dlq[m] = 0;
#ifdef BROKEN_ACK_RECHECK
    seen_ip[m] = 0;
#endif
    printf("MSC: operator redrives m%d from the DLQ\n", m)
  }
}

/* Everything that is not a worker: the clock, the HeartbeatScheduler thread (one tick at a
   time, for whichever delivery is due) and the operator (reopen, redrive). One process keeps
   weak fairness cheap and loses nothing: once calm, operators are gone and a due heartbeat
   blocks the clock, so this process can only move by firing the due heartbeats; before
   calm, fairness does not matter (the liveness property assumes calm). */
active proctype env() {
end:
  do
#ifndef NOTIME
  :: atomic {
       TIME_MATTERS && !ANY_URGENT ->
       decrement(left); decrement(lv[0]); decrement(lv[1]);
#if NW == 3
       decrement(lv[2]);
#endif
       printf("MSC: tick: record leaseUntil - true now = %d\n", left - 1);
       normalize()
     }
#endif
#ifdef LIVENESS
  :: atomic { !calm -> calm = 1; printf("MSC: crashes, faults and operator actions stop\n") }
#endif
  :: heartbeat_tick(0)
  :: heartbeat_tick(1)
#if NW == 3
  :: heartbeat_tick(2)
#endif
  :: atomic {
       OPERATING && REOPEN_COND ->
       if
       :: st == FAILED -> fin = 0 /* an audited reopen of FAILED starts the key afresh */
       :: else
       fi;
       st = INPROG; tok = 0; EXPIRE_LEASE; reopen_due = 1;
       printf("MSC: operator reopens the key: IN_PROGRESS, lease expired, no holder\n");
       normalize()
     }
  :: redrive(1)
  :: redrive(2)
#if NM == 3
  :: redrive(3)
#endif
  od
}
#endif /* EXT */

/* ---- properties ---- */
#ifndef NOTIME
ltl one_live_claim { [] !TWO_LIVE }
#endif
ltl holder_writes { [] !bad_write }
ltl final_is_final { [] (fin == 0 || st == fin) }
ltl money_once { [] (moved <= 1) }
ltl payload_match { [] !bad_debit }
ltl ack_after_final { [] ACKS_OK }
/* witness, expected to FAIL: the correct protocol calls the debit twice for one key (after a
   transient failure or in the crash window of DESIGN section 2): the bank's dedupe is needed */
ltl single_attempt { [] (attempts <= 1) }
#ifdef EXT
/* every message leaves the source queue and the key is final, unless the operator's last
   reopen has not been finished yet (it waits for a redrive); `calm &&`: operator actions
   before calm may undo an earlier settling */
ltl settles { (<> calm) -> (<> (calm && ALL_GONE && (FINAL || reopen_due))) }
/* witness, expected to FAIL: a delivery that was in flight when the operator reopened
   the key claims it, and its worker dies with every copy of the message already dead-lettered:
   the key needs another redrive */
ltl no_orphan { [] !ORPHAN }
#else
ltl settles { (<> calm) -> (<> (FINAL && ALL_GONE)) }
#endif
