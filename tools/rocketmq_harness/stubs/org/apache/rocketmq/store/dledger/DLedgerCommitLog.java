package org.apache.rocketmq.store.dledger;
import org.apache.rocketmq.store.CommitLog;
import org.apache.rocketmq.store.DefaultMessageStore;
/** harness stub: DLedger commitlog is never enabled in the fixture generator. */
public class DLedgerCommitLog extends CommitLog {
    public DLedgerCommitLog(DefaultMessageStore s) { super(s); throw new UnsupportedOperationException("dledger stub"); }
    public io.openmessaging.storage.dledger.DLedgerServer getdLedgerServer() { throw new UnsupportedOperationException(); }
}
