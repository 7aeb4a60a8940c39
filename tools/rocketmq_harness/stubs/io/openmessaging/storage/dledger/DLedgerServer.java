package io.openmessaging.storage.dledger;
public class DLedgerServer { public DLedgerConfig getdLedgerConfig() { throw new UnsupportedOperationException(); } }
