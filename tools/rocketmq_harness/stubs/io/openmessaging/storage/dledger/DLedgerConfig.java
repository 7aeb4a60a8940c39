package io.openmessaging.storage.dledger;
public class DLedgerConfig { public String getDataStorePath() { throw new UnsupportedOperationException(); } }
