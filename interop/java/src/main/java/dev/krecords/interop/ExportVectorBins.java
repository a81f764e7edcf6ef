package dev.krecords.interop;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * {@code ExportVectorBins VECTOR_DIR OUT_DIR}: for every builder vector (layout "records") in
 * VECTOR_DIR writes OUT_DIR/NAME.bin (the vector's bytes) and OUT_DIR/NAME.json (its "build" object):
 * the pairs {@code ValidateBuilt OUT_DIR} reads. Used to test the validator on Kafka's own output, and
 * handy for anyone who wants the vectors as binary files.
 */
public final class ExportVectorBins {
    private ExportVectorBins() {}

    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            System.err.println("usage: ExportVectorBins VECTOR_DIR OUT_DIR");
            System.exit(2);
        }
        Path in = Path.of(args[0]);
        Path out = Path.of(args[1]);
        Files.createDirectories(out);
        List<Path> files;
        try (Stream<Path> s = Files.list(in)) {
            files = s.filter(p -> p.toString().endsWith(".json")).sorted().collect(Collectors.toList());
        }
        int written = 0;
        for (Path f : files) {
            Map<String, Object> v = Json.obj(Json.parse(Files.readString(f, StandardCharsets.UTF_8)), f.toString());
            if (!"records".equals(v.get("layout"))) continue;
            String name = (String) v.get("name");
            Files.write(out.resolve(name + ".bin"), Hex.decode((String) v.get("hex")));
            Files.writeString(out.resolve(name + ".json"), Json.write(v.get("build"), 1), StandardCharsets.UTF_8);
            written++;
        }
        System.out.println("exported " + written + " vectors to " + out);
    }
}
