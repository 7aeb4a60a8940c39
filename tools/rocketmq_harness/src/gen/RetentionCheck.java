package gen;

import java.io.File;
import java.lang.reflect.*;
import java.nio.file.*;
import java.util.*;
import org.apache.rocketmq.store.*;
import org.apache.rocketmq.store.config.MessageStoreConfig;

/** Harness: open a COPY, executeDeleteFilesManually, run one clean round of CommitLog then ConsumeQueue/index, dump. args: ROOT OUT cl cq slots index */
public class RetentionCheck {
    public static void main(String[] a) {
        try {
            MessageStoreConfig cfg = Harness.config(a[0], a, 2, 20918);
            cfg.setDeleteCommitLogFilesInterval(0);
            cfg.setDeleteConsumeQueueFilesInterval(0);
            DefaultMessageStore store = Harness.open(cfg);
            store.executeDeleteFilesManually();
            for (String name : new String[] {"cleanCommitLogService", "cleanConsumeQueueService"}) {
                Field f = DefaultMessageStore.class.getDeclaredField(name);
                f.setAccessible(true);
                Object svc = f.get(store);
                Method run = svc.getClass().getDeclaredMethod("run");
                run.setAccessible(true);
                run.invoke(svc);
            }
            List<Map<String, Object>> out = new ArrayList<>();
            Map<String, Object> head = new LinkedHashMap<>();
            head.put("kind", "load");
            head.put("abortBefore", false);
            head.put("loaded", true);
            out.add(head);
            Map<String, Object> files = new LinkedHashMap<>();
            for (String dir : new String[] {"commitlog", "index"}) {
                String[] names = new File(a[0], dir).list();
                Arrays.sort(names);
                files.put(dir, Arrays.asList(names));
            }
            File cqRoot = new File(a[0], "consumequeue");
            for (String topic : sortedList(cqRoot)) for (String q : sortedList(new File(cqRoot, topic)))
                files.put("consumequeue/" + topic + "/" + q, sortedList(new File(new File(cqRoot, topic), q)));
            head.put("files", files);
            CorpusCheck.dump(store, a[0], head, out);
            Harness.writeJsonl(out, a[1]);
            store.shutdown();
            System.exit(0);
        } catch (Throwable t) { t.printStackTrace(); System.exit(1); }
    }

    static List<String> sortedList(File d) {
        String[] n = d.list();
        if (n == null) return new ArrayList<>();
        Arrays.sort(n);
        return Arrays.asList(n);
    }
}
