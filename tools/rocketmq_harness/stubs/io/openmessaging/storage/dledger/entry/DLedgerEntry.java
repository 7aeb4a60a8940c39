package io.openmessaging.storage.dledger.entry;
/** harness stub: only the constant referenced by DefaultMessageStore (DLedger mode is never enabled here). */
public class DLedgerEntry { public final static int BODY_OFFSET = 4 + 4 + 8 + 8 + 8 + 8 + 4 + 4 + 4 + 4; }
