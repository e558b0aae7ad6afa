<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de_DE">
<context>
    <name>AnalysisPane</name>
    <message>
        <source>%1, %2 ramping</source>
        <translation>%1, %2 im Übergang</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="213"/>
        <source>%1 · %2 · %3</source>
        <translation>%1 · %2 · %3</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="123"/>
        <source>LN-free (%1 at all %2 sites)</source>
        <translation>LN-frei (%1 an allen %2 Stellen)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="127"/>
        <source>%1 of %2 sites %3</source>
        <translation>%1 von %2 Stellen %3</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="129"/>
        <source>%1 of %2 sites %3, %4 ramping</source>
        <translation>%1 von %2 Stellen %3, %4 im Übergang</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="131"/>
        <source>LN-free (folded)</source>
        <translation>LN-frei (gefaltet)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="134"/>
        <source>LN-free (standard form: %1 with a huge ε)</source>
        <translation>LN-frei (Standardform: %1 mit riesigem ε)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="132"/>
        <source>LN-free</source>
        <translation>LN-frei</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="142"/>
        <source>, sequence %1</source>
        <translation>, Sequenz %1</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="148"/>
        <source> (%1 were asked for: the file holds no more that do not overlap)</source>
        <translation> (%1 waren verlangt: die Datei enthält nicht mehr, die sich nicht überschneiden)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="160"/>
        <source>%1: %2 sequence × %3 tokens from the start</source>
        <translation>%1: %2 Sequenz × %3 Token vom Anfang</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="161"/>
        <source>%1: %2 sequences × %3 tokens from the start</source>
        <translation>%1: %2 Sequenzen × %3 Token vom Anfang</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="165"/>
        <source>%1: %2 document × %3 tokens, each from the end-of-text token before it</source>
        <translation>%1: %2 Dokument × %3 Token, jeweils ab dem Textende-Token davor</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="166"/>
        <source>%1: %2 documents × %3 tokens, each from the end-of-text token before it</source>
        <translation>%1: %2 Dokumente × %3 Token, jeweils ab dem Textende-Token davor</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="170"/>
        <source>%1: %2 document × %3 tokens, each from the begin-of-sequence token that starts it</source>
        <translation>%1: %2 Dokument × %3 Token, jeweils ab dem Sequenzanfangs-Token, mit dem es beginnt</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="172"/>
        <source>%1: %2 documents × %3 tokens, each from the begin-of-sequence token that starts it</source>
        <translation>%1: %2 Dokumente × %3 Token, jeweils ab dem Sequenzanfangs-Token, mit dem es beginnt</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="176"/>
        <source>IOI prompt set %1</source>
        <translation>IOI-Prompt-Satz %1</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="178"/>
        <source>IOI prompts: %1</source>
        <translation>IOI-Prompts: %1</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="212"/>
        <source>&lt;b&gt;Step %1&lt;/b&gt;</source>
        <translation>&lt;b&gt;Schritt %1&lt;/b&gt;</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="212"/>
        <source>&lt;b&gt;Saved model&lt;/b&gt;</source>
        <translation>&lt;b&gt;Gespeichertes Modell&lt;/b&gt;</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="218"/>
        <source>stale: the model has changed since</source>
        <translation>veraltet: das Modell hat sich seither geändert</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="231"/>
        <source>stale: its settings have changed since</source>
        <translation>veraltet: die Einstellungen haben sich seither geändert</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="219"/>
        <source>stale: the model is at step %1</source>
        <translation>veraltet: Das Modell ist bei Schritt %1</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="225"/>
        <source>computing… (training here slows meanwhile: they share the processor)</source>
        <translation>wird berechnet… (das Training hier wird solange langsamer: beide teilen sich den Prozessor)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="227"/>
        <source>computing…</source>
        <translation>wird berechnet…</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="231"/>
        <source>Failed: %1</source>
        <translation>Fehlgeschlagen: %1</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="236"/>
        <source>Refresh</source>
        <translation>Aktualisieren</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="237"/>
        <source>Compute this analysis on the model as it is now</source>
        <translation>Diese Analyse für den aktuellen Zustand des Modells berechnen</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="238"/>
        <source>Compute now</source>
        <translation>Jetzt berechnen</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="248"/>
        <source>Not computed yet for this model. It takes seconds on the bundled model; Refresh analyses (toolbar) computes every pane.</source>
        <translation>Für dieses Modell noch nicht berechnet. Auf dem mitgelieferten Modell dauert es Sekunden; „Analysen aktualisieren“ (Werkzeugleiste) berechnet alle Bereiche.</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="259"/>
        <source>No model is open: open a model folder or a run to compute this analysis.</source>
        <translation>Kein Modell geöffnet: Öffnen Sie einen Modellordner oder einen Lauf, um diese Analyse zu berechnen.</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="261"/>
        <source>The run is not ready yet: its model can be analysed once it trains.</source>
        <translation>Der Lauf ist noch nicht bereit: Sein Modell lässt sich analysieren, sobald er trainiert.</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="263"/>
        <source>This run&apos;s model is not on this machine: open the run where it trains, or connect to it, to compute analyses.</source>
        <translation>Das Modell dieses Laufs liegt nicht auf diesem Rechner: Öffnen Sie den Lauf dort, wo er trainiert, oder verbinden Sie sich mit ihm, um Analysen zu berechnen.</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="267"/>
        <source>The connected run has ended and its server answers no more: open its run folder or model on the machine that trained it to analyse it.</source>
        <translation>Der verbundene Lauf ist beendet, sein Server antwortet nicht mehr: Öffnen Sie seinen Laufordner oder sein Modell auf dem Rechner, der ihn trainiert hat, um ihn zu analysieren.</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="281"/>
        <source>Export</source>
        <translation>Exportieren</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="282"/>
        <source>SVG drawing (*.svg);;PNG image (*.png);;CSV data (*.csv)</source>
        <translation>SVG-Zeichnung (*.svg);;PNG-Bild (*.png);;CSV-Daten (*.csv)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPane.cpp" line="285"/>
        <source>Export failed</source>
        <translation>Export fehlgeschlagen</translation>
    </message>
</context>
<context>
    <name>AppFolders</name>
    <message>
        <location filename="../widgets/window/AppFolders.cpp" line="37"/>
        <source>Tiny GPT-2 — 4 layers, the default: a removal takes minutes on a laptop</source>
        <translation>Kleines GPT-2 — 4 Schichten, die Voreinstellung: eine Entfernung dauert auf einem Laptop Minuten</translation>
    </message>
    <message>
        <location filename="../widgets/window/AppFolders.cpp" line="39"/>
        <source>Tiny LLaMA — 4 layers with RMSNorm, rotary embeddings, SwiGLU and grouped queries</source>
        <translation>Kleines LLaMA — 4 Schichten mit RMSNorm, Rotary-Embeddings, SwiGLU und gruppierten Queries</translation>
    </message>
</context>
<context>
    <name>AttentionGrid</name>
    <message>
        <location filename="../widgets/analysis/TokenViews.cpp" line="125"/>
        <source>%1 · query %2 &apos;%3&apos; → key %4 &apos;%5&apos;: %6</source>
        <translation>%1 · Query %2 &apos;%3&apos; → Key %4 &apos;%5&apos;: %6</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/TokenViews.cpp" line="135"/>
        <source>Click a cell to lock its query row in every head.</source>
        <translation>Eine Zelle anklicken, um ihre Query-Zeile in jedem Kopf festzuhalten.</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/TokenViews.cpp" line="141"/>
        <source>%1 → &apos;%2&apos; %3</source>
        <translation>%1 → &apos;%2&apos; %3</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/TokenViews.cpp" line="145"/>
        <source>Query %1 &apos;%2&apos; attends most to: %3 (click it again to unlock)</source>
        <translation>Query %1 &apos;%2&apos; achtet am meisten auf: %3 (erneut anklicken zum Lösen)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/TokenViews.cpp" line="173"/>
        <source>%1 (row: query, column: key)</source>
        <translation>%1 (Zeile: Query, Spalte: Key)</translation>
    </message>
</context>
<context>
    <name>BenchmarksPane</name>
    <message>
        <source>Accuracy per task (± standard error)</source>
        <translation>Genauigkeit je Aufgabe (± Standardfehler)</translation>
    </message>
    <message>
        <source>Accuracy per synthetic task (made from the corpus; not the real benchmarks), ± standard error</source>
        <translation>Genauigkeit je synthetischer Aufgabe (aus dem Korpus erzeugt; nicht die echten Benchmarks), ± Standardfehler</translation>
    </message>
    <message>
        <source>%1 items; compare with a model to list those the two answer differently</source>
        <translation>%1 Einträge; vergleichen Sie mit einem Modell, um die aufzulisten, die beide verschieden beantworten</translation>
    </message>
    <message>
        <source>Compared with: %1</source>
        <translation>Verglichen mit: %1</translation>
    </message>
    <message>
        <source>Compared with: no other model</source>
        <translation>Verglichen mit: keinem anderen Modell</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="122"/>
        <source>Downstream benchmarks — HellaSwag, PIQA, WinoGrande, BoolQ, ARC, LAMBADA — scored as lm-evaluation-harness scores them, on the model now and on the starting model, from the task files in a folder you choose (nothing is downloaded). Until you choose one, tasks made from the synthetic corpus in those formats, which the bundled models can answer.</source>
        <translation>Downstream-Benchmarks – HellaSwag, PIQA, WinoGrande, BoolQ, ARC, LAMBADA –, bewertet wie lm-evaluation-harness sie bewertet, am Modell jetzt und am Ausgangsmodell, aus den Aufgabendateien eines Ordners Ihrer Wahl (nichts wird heruntergeladen). Bis Sie einen wählen: Aufgaben in diesen Formaten aus dem synthetischen Korpus, die die mitgelieferten Modelle lösen können.</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="147"/>
        <source>Folder of benchmark files (hellaswag_val.jsonl, winogrande_1.1/dev.jsonl, …)</source>
        <translation>Ordner mit Benchmark-Dateien (hellaswag_val.jsonl, winogrande_1.1/dev.jsonl, …)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="152"/>
        <source>Tasks: synthetic, made from the corpus</source>
        <translation>Aufgaben: synthetisch, aus dem Korpus</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="153"/>
        <source>Tasks: the files in %1</source>
        <translation>Aufgaben: die Dateien in %1</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="156"/>
        <source>Compared with: only the starting model</source>
        <translation>Verglichen mit: nur dem Ausgangsmodell</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="157"/>
        <source>Compared with: the starting model and %1</source>
        <translation>Verglichen mit: dem Ausgangsmodell und %1</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="240"/>
        <source>%1
(synthetic)</source>
        <translation>%1
(synthetisch)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="256"/>
        <source>right</source>
        <translation>richtig</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="256"/>
        <source>wrong</source>
        <translation>falsch</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="293"/>
        <source>Accuracy per task, the starting model against the model now (± standard error)</source>
        <translation>Genauigkeit je Aufgabe, Ausgangsmodell gegen das Modell jetzt (± Standardfehler)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="298"/>
        <source>accuracy (%)</source>
        <translation>Genauigkeit (%)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="284"/>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="299"/>
        <source>starting model</source>
        <translation>Ausgangsmodell</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="113"/>
        <source>A model to compare with (the vanilla control&apos;s final model, say)</source>
        <translation>Ein Vergleichsmodell (etwa das finale Modell der Vanilla-Kontrolle)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="277"/>
        <source>Items the model now and the compared model answer differently: %1 of %2</source>
        <translation>Einträge, die das Modell jetzt und das Vergleichsmodell verschieden beantworten: %1 von %2</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="278"/>
        <source>Items the model now and the starting model answer differently: %1 of %2</source>
        <translation>Einträge, die das Modell jetzt und das Ausgangsmodell verschieden beantworten: %1 von %2</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="285"/>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="301"/>
        <source>compared model</source>
        <translation>Vergleichsmodell</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="286"/>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="300"/>
        <source>model now</source>
        <translation>Modell jetzt</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="291"/>
        <source>Accuracy per synthetic task (made from the corpus; not the real benchmarks), the starting model against the model now (± standard error)</source>
        <translation>Genauigkeit je synthetischer Aufgabe (aus dem Korpus erzeugt; nicht die echten Benchmarks), Ausgangsmodell gegen das Modell jetzt (± Standardfehler)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="302"/>
        <source>Compare With…</source>
        <translation>Vergleichen mit…</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="303"/>
        <source>No Comparison</source>
        <translation>Kein Vergleich</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="304"/>
        <source>Choose Task Files…</source>
        <translation>Aufgabendateien wählen…</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="305"/>
        <source>Synthetic Tasks</source>
        <translation>Synthetische Aufgaben</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="306"/>
        <source>items per task:</source>
        <translation>Einträge je Aufgabe:</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="284"/>
        <source>task</source>
        <translation>Aufgabe</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="284"/>
        <source>line in the file</source>
        <translation>Zeile in der Datei</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/BenchmarksPane.cpp" line="284"/>
        <source>right choice</source>
        <translation>richtige Wahl</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/BenchmarksPane.h" line="24"/>
        <source>Benchmarks</source>
        <translation>Benchmarks</translation>
    </message>
</context>
<context>
    <name>CalibrationPane</name>
    <message>
        <source>ECE</source>
        <translation>ECE</translation>
    </message>
    <message>
        <source>top-1</source>
        <translation>Top-1</translation>
    </message>
    <message>
        <source>entropy</source>
        <translation>Entropie</translation>
    </message>
    <message>
        <source>loss</source>
        <translation>Verlust</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CalibrationPane.cpp" line="62"/>
        <source>Loss, entropy, accuracy and calibration of the model now and of the starting model, a reliability diagram, and greedy and sampled continuations of a few prompts.</source>
        <translation>Verlust, Entropie, Genauigkeit und Kalibrierung des Modells jetzt und des Ausgangsmodells, ein Zuverlässigkeitsdiagramm sowie gierige und gesampelte Fortsetzungen einiger Prompts.</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CalibrationPane.cpp" line="139"/>
        <source>On the sequences the header names; the loss plot&apos;s evaluations read the run&apos;s own evaluation tokens, so the two losses differ.</source>
        <translation>Auf den Sequenzen, die die Kopfzeile nennt; die Auswertungen im Verlustdiagramm lesen die eigenen Auswertungstoken des Laufs, daher unterscheiden sich die beiden Verluste.</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CalibrationPane.cpp" line="147"/>
        <source>greedy</source>
        <translation>greedy</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CalibrationPane.cpp" line="147"/>
        <source>sampled</source>
        <translation>gesampelt</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CalibrationPane.cpp" line="154"/>
        <source>Reliability diagram: accuracy per confidence bin</source>
        <translation>Reliabilitätsdiagramm: Genauigkeit je Konfidenz-Bin</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CalibrationPane.cpp" line="155"/>
        <source>confidence (top-1 probability)</source>
        <translation>Konfidenz (Top-1-Wahrscheinlichkeit)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CalibrationPane.cpp" line="156"/>
        <source>accuracy</source>
        <translation>Genauigkeit</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CalibrationPane.cpp" line="157"/>
        <location filename="../widgets/analysis/CalibrationPane.cpp" line="160"/>
        <source>starting model</source>
        <translation>Ausgangsmodell</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CalibrationPane.cpp" line="158"/>
        <location filename="../widgets/analysis/CalibrationPane.cpp" line="160"/>
        <source>now</source>
        <translation>jetzt</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CalibrationPane.cpp" line="159"/>
        <source>perfect calibration</source>
        <translation>perfekte Kalibrierung</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CalibrationPane.cpp" line="160"/>
        <source>prompt</source>
        <translation>Prompt</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CalibrationPane.h" line="16"/>
        <source>Calibration</source>
        <translation>Kalibrierung</translation>
    </message>
</context>
<context>
    <name>CircuitPane</name>
    <message>
        <source>Attribution error on the top edges (score against patching each alone): %1.</source>
        <translation>Attributionsfehler der stärksten Kanten (Wert gegen Patchen jeder einzeln): %1.</translation>
    </message>
    <message>
        <source>Attribution error on the top edges (score against patching each alone): starting model %1, model now %2.</source>
        <translation>Attributionsfehler der stärksten Kanten (Wert gegen Patchen jeder einzeln): Ausgangsmodell %1, Modell jetzt %2.</translation>
    </message>
    <message>
        <source>Logit difference clean %1, corrupted %2.</source>
        <translation>Logit-Differenz sauber %1, verfälscht %2.</translation>
    </message>
    <message>
        <source>Faithfulness of the top edges, measured</source>
        <translation>Treue der stärksten Kanten, gemessen</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CircuitPane.cpp" line="74"/>
        <source>Save the circuit</source>
        <translation>Schaltkreis speichern</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CircuitPane.cpp" line="75"/>
        <source>Circuit JSON (*.json);;Edges CSV (*.csv)</source>
        <translation>Schaltkreis-JSON (*.json);;Kanten-CSV (*.csv)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CircuitPane.cpp" line="121"/>
        <source>The circuit behind the indirect-object prompts, found by edge attribution patching: which heads and MLPs pass the name to which, drawn as a graph for the starting model and the model now, with the faithfulness of the top edges measured by patching everything else — does removing LayerNorm make the circuit sparser or the attribution truer?</source>
        <translation>Der Schaltkreis hinter den Prompts zum indirekten Objekt, gefunden mit Edge Attribution Patching: welche Heads und MLPs den Namen an welche weitergeben, als Graph für das Ausgangsmodell und das Modell jetzt, dazu die Treue der stärksten Kanten, gemessen durch Patchen aller übrigen — macht das Entfernen von LayerNorm den Schaltkreis dünner oder die Attribution genauer?</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CircuitPane.cpp" line="215"/>
        <source>embed</source>
        <translation>Einbettung</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CircuitPane.cpp" line="217"/>
        <source>L%1 heads</source>
        <translation>L%1 Heads</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CircuitPane.cpp" line="217"/>
        <source>MLP %1</source>
        <translation>MLP %1</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CircuitPane.cpp" line="218"/>
        <source>logits</source>
        <translation>Logits</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CircuitPane.cpp" line="220"/>
        <source>%1: %2 of %3 edges keep %4 %</source>
        <translation>%1: %2 von %3 Kanten erhalten %4 %</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CircuitPane.cpp" line="221"/>
        <source>Model now</source>
        <translation>Modell jetzt</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CircuitPane.cpp" line="221"/>
        <source>Starting model</source>
        <translation>Ausgangsmodell</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CircuitPane.cpp" line="244"/>
        <source>not checked</source>
        <translation>nicht geprüft</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CircuitPane.cpp" line="251"/>
        <source>edges drawn: %1</source>
        <translation>gezeichnete Kanten: %1</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CircuitPane.cpp" line="280"/>
        <source>No circuit has been computed yet.</source>
        <translation>Es wurde noch kein Schaltkreis berechnet.</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CircuitPane.cpp" line="291"/>
        <source>Could not save %1: %2</source>
        <translation>%1 konnte nicht gespeichert werden: %2</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CircuitPane.cpp" line="297"/>
        <source>EAP</source>
        <translation>EAP</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CircuitPane.cpp" line="298"/>
        <source>EAP with integrated gradients</source>
        <translation>EAP mit integrierten Gradienten</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CircuitPane.cpp" line="300"/>
        <source>how edges are scored: attribution patching, or its integrated-gradients version (5 steps from the corrupted to the clean embeddings)</source>
        <translation>wie Kanten bewertet werden: Attribution Patching oder seine Variante mit integrierten Gradienten (5 Schritte von den verfälschten zu den sauberen Einbettungen)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CircuitPane.cpp" line="302"/>
        <source>Save circuit…</source>
        <translation>Schaltkreis speichern…</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CircuitPane.cpp" line="303"/>
        <source>the top edges drawn (by |score|); the circuit&apos;s own are solid</source>
        <translation>die gezeichneten stärksten Kanten (nach |Wert|); die des Schaltkreises durchgezogen</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CircuitPane.cpp" line="304"/>
        <source>Faithfulness of the top edges, measured (dashed: starting model)</source>
        <translation>Treue der stärksten Kanten, gemessen (gestrichelt: Ausgangsmodell)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CircuitPane.cpp" line="305"/>
        <source>edges kept (by |score|)</source>
        <translation>behaltene Kanten (nach |Wert|)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CircuitPane.cpp" line="306"/>
        <source>faithfulness</source>
        <translation>Treue</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CircuitPane.cpp" line="307"/>
        <source>starting model</source>
        <translation>Ausgangsmodell</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CircuitPane.cpp" line="308"/>
        <source>model now</source>
        <translation>Modell jetzt</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CircuitPane.cpp" line="314"/>
        <source>IOI circuit</source>
        <translation>IOI-Schaltkreis</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CircuitPane.cpp" line="315"/>
        <source>edges drawn</source>
        <translation>gezeichnete Kanten</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/CircuitPane.h" line="25"/>
        <source>Circuit</source>
        <translation>Schaltkreis</translation>
    </message>
</context>
<context>
    <name>ConnectedRun</name>
    <message>
        <location filename="../widgets/run/ConnectedRun.cpp" line="101"/>
        <source>The run at %1 answered its status malformed: %2</source>
        <translation>Der Lauf auf %1 hat einen fehlerhaften Status geantwortet: %2</translation>
    </message>
</context>
<context>
    <name>EditRefusalText</name>
    <message>
        <source>step %1 has already started: an edit can reach step %2 or later</source>
        <translation>Schritt %1 hat bereits begonnen: eine Änderung kann Schritt %2 oder später erreichen</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/EditRefusalText.cpp" line="11"/>
        <source>event %1 (%2): </source>
        <translation>Ereignis %1 (%2): </translation>
    </message>
    <message>
        <location filename="../widgets/timeline/EditRefusalText.cpp" line="14"/>
        <source>the id is used twice</source>
        <translation>die ID wird zweimal verwendet</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/EditRefusalText.cpp" line="16"/>
        <source>the step is negative</source>
        <translation>der Schritt ist negativ</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/EditRefusalText.cpp" line="18"/>
        <source>step %1 is past the last step %2</source>
        <translation>Schritt %1 liegt nach dem letzten Schritt %2</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/EditRefusalText.cpp" line="20"/>
        <source>layer %1 is out of range (the model has %2 layers)</source>
        <translation>Schicht %1 liegt außerhalb des Bereichs (das Modell hat %2 Schichten)</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/EditRefusalText.cpp" line="22"/>
        <source>the end-of-text treatment exists on LN_v only</source>
        <translation>die Textende-Behandlung gibt es nur bei LN_v</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/EditRefusalText.cpp" line="24"/>
        <source>%1 is already made fake at step %2</source>
        <translation>%1 wird bereits bei Schritt %2 durch FakeLN ersetzt</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/EditRefusalText.cpp" line="25"/>
        <source>%1 is already switched off at step %2</source>
        <translation>%1 wird bereits bei Schritt %2 abgeschaltet</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/EditRefusalText.cpp" line="30"/>
        <source>the run does not use the position-0 treatment, so there is nothing to switch off</source>
        <translation>der Lauf verwendet die Position-0-Behandlung nicht, es gibt also nichts abzuschalten</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/EditRefusalText.cpp" line="32"/>
        <source>the run does not use the end-of-text treatment, so there is nothing to switch off</source>
        <translation>der Lauf verwendet die Textende-Behandlung nicht, es gibt also nichts abzuschalten</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/EditRefusalText.cpp" line="36"/>
        <source>%1 is made fake only at step %2, so it has no treatment yet to switch off</source>
        <translation>%1 wird erst bei Schritt %2 durch FakeLN ersetzt, hat also noch keine Behandlung, die sich abschalten ließe</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/EditRefusalText.cpp" line="39"/>
        <source>%1 is never made fake, so it never gets a treatment to switch off</source>
        <translation>%1 wird nie durch FakeLN ersetzt, bekommt also nie eine Behandlung, die sich abschalten ließe</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/EditRefusalText.cpp" line="50"/>
        <source>there is no event %1</source>
        <translation>es gibt kein Ereignis %1</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/EditRefusalText.cpp" line="52"/>
        <source>event %1 (%2) has already been applied</source>
        <translation>Ereignis %1 (%2) wurde bereits angewendet</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/EditRefusalText.cpp" line="63"/>
        <source>this run is trained by another process (followed through its files); edit it where it runs</source>
        <translation>dieser Lauf wird von einem anderen Prozess trainiert (über seine Dateien verfolgt); bearbeiten Sie ihn dort, wo er läuft</translation>
    </message>
</context>
<context>
    <name>FigureExport</name>
    <message>
        <location filename="../widgets/window/FigureExport.cpp" line="18"/>
        <source>Training (no run)</source>
        <translation>Training (kein Lauf)</translation>
    </message>
    <message>
        <location filename="../widgets/window/FigureExport.cpp" line="41"/>
        <source>Not computed yet: %1</source>
        <translation>Noch nicht berechnet: %1</translation>
    </message>
    <message numerus="yes">
        <location filename="../widgets/window/FigureExport.cpp" line="70"/>
        <source>%n file(s) could not be written.</source>
        <translation>
            <numerusform>%n Datei konnte nicht geschrieben werden.</numerusform>
            <numerusform>%n Dateien konnten nicht geschrieben werden.</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../widgets/window/FigureExport.cpp" line="71"/>
        <source>Exported %1 files to %2</source>
        <translation>%1 Dateien nach %2 exportiert</translation>
    </message>
    <message>
        <location filename="../widgets/window/FigureExport.cpp" line="72"/>
        <source>Exported %1 files to %2; not exported, as not computed yet: %3</source>
        <translation>%1 Dateien nach %2 exportiert; nicht exportiert, da noch nicht berechnet: %3</translation>
    </message>
</context>
<context>
    <name>HeadsPane</name>
    <message>
        <source>The maps above are of the model or data before: refresh them, then click a head.</source>
        <translation>Die Karten oben gehören zum vorigen Modell oder zu den vorigen Daten: Aktualisieren Sie sie, dann klicken Sie einen Head an.</translation>
    </message>
    <message>
        <source>The model or its data changed before the detail was computed: click a head again.</source>
        <translation>Das Modell oder seine Daten haben sich geändert, bevor die Detailansicht berechnet war: Klicken Sie erneut auf einen Head.</translation>
    </message>
    <message>
        <source>95 % bootstrap interval %1–%2 %</source>
        <translation>95-%-Bootstrap-Intervall %1–%2 %</translation>
    </message>
    <message>
        <source>no bootstrap interval: fewer than %1 sequences, or no resamples</source>
        <translation>kein Bootstrap-Intervall: weniger als %1 Sequenzen oder keine Stichproben</translation>
    </message>
    <message>
        <source>Mean NMAE over heads: &lt;b&gt;%1 %&lt;/b&gt; (%2) · decomposition check max |Σ DLA + β·u − logit| = %3 · attention sink rate %4 (per query %5)</source>
        <translation>Mittlerer NMAE über alle Heads: &lt;b&gt;%1 %&lt;/b&gt; (%2) · Zerlegungsprüfung max |Σ DLA + β·u − logit| = %3 · Attention-Sink-Rate %4 (je Query %5)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="159"/>
        <source>Failed: %1</source>
        <translation>Fehlgeschlagen: %1</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="166"/>
        <source>Per head, the mean |direct logit attribution| with the cached final-norm scale (DLA), the mean |direct effect| with the final norm recomputed (DE), and their normalized error (NMAE), which is zero once the model is norm-free. Click a head for its values per position and its attention pattern.</source>
        <translation>Pro Kopf die mittlere |direkte Logit-Attribution| mit der zwischengespeicherten Skala der letzten Norm (DLA), der mittlere |direkte Effekt| mit neu berechneter letzter Norm (DE) und ihr normierter Fehler (NMAE), der null ist, sobald das Modell normfrei ist. Ein Klick auf einen Kopf zeigt seine Werte je Position und sein Aufmerksamkeitsmuster.</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="311"/>
        <source>Computing L%1H%2 on sequence %3…</source>
        <translation>Berechne L%1H%2 auf Sequenz %3 …</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="314"/>
        <source>(the plots below still show L%1H%2: stale)</source>
        <translation>(die Diagramme darunter zeigen noch L%1H%2: veraltet)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="387"/>
        <source>L%1H%2 attention pattern (hover a cell)</source>
        <translation>L%1H%2 Aufmerksamkeitsmuster (Zelle überfahren)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="388"/>
        <source>L%1H%2 per position: DLA vs DE, sequence %3, its first %4 tokens</source>
        <translation>L%1H%2 je Position: DLA gegen DE, Sequenz %3, ihre ersten %4 Token</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="400"/>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="408"/>
        <source>step %1</source>
        <translation>Schritt %1</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="400"/>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="408"/>
        <source>saved model</source>
        <translation>gespeichertes Modell</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="404"/>
        <source>&lt;b&gt;L%1H%2&lt;/b&gt; · %3 · the maps above are of %4 · sequence:</source>
        <translation>&lt;b&gt;L%1H%2&lt;/b&gt; · %3 · die Karten oben zeigen %4 · Sequenz:</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="413"/>
        <source>&lt;b&gt;L%1H%2&lt;/b&gt; · %6 · sink share %3 (mean attention to position 0: %4) · NMAE %5 % · sequence:</source>
        <translation>&lt;b&gt;L%1H%2&lt;/b&gt; · %6 · Sink-Anteil %3 (mittlere Aufmerksamkeit auf Position 0: %4) · NMAE %5 % · Sequenz:</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="448"/>
        <source>query %1 “%2” → key %3 “%4”: weight %5</source>
        <translation>Query %1 „%2“ → Key %3 „%4“: Gewicht %5</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="456"/>
        <source>Per head, mean over positions: |DLA|, |DE| (logit units) and NMAE (%)</source>
        <translation>Je Head, gemittelt über Positionen: |DLA|, |DE| (Logit-Einheiten) und NMAE (%)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="457"/>
        <source>mean |DLA|</source>
        <translation>mittleres |DLA|</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="457"/>
        <source>mean |DE|</source>
        <translation>mittleres |DE|</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="457"/>
        <source>NMAE (%)</source>
        <translation>NMAE (%)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="460"/>
        <source>head</source>
        <translation>Head</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="461"/>
        <source>layer</source>
        <translation>Schicht</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="464"/>
        <source>DLA (cached scale)</source>
        <translation>DLA (gecachte Skala)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="465"/>
        <source>DE (recomputed)</source>
        <translation>DE (neu berechnet)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="466"/>
        <source>token predicted</source>
        <translation>vorhergesagtes Token</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="467"/>
        <source>logit contribution</source>
        <translation>Logit-Beitrag</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="468"/>
        <source>attention</source>
        <translation>Attention</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="469"/>
        <source>key</source>
        <translation>Key</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="470"/>
        <source>query</source>
        <translation>Query</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="471"/>
        <source>attention weight</source>
        <translation>Attention-Gewicht</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="476"/>
        <source>Click a head to see its DLA and DE per position</source>
        <translation>Head anklicken, um DLA und DE je Position zu sehen</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="477"/>
        <source>Click a head to see its attention pattern</source>
        <translation>Head anklicken, um sein Attention-Muster zu sehen</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="478"/>
        <source>No head selected. Sequence:</source>
        <translation>Kein Head ausgewählt. Sequenz:</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="481"/>
        <source>Which validation sequence the detail shows</source>
        <translation>Welche Validierungssequenz das Detail zeigt</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="482"/>
        <source> tokens</source>
        <translation> Token</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.cpp" line="484"/>
        <source>How many of the sequence&apos;s first tokens the detail shows (up to the whole sequence; the plots widen, the pane scrolls)</source>
        <translation>Wie viele der ersten Token der Sequenz das Detail zeigt (bis zur ganzen Sequenz; die Diagramme werden breiter, der Bereich scrollt)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/HeadsPane.h" line="23"/>
        <source>Heads</source>
        <translation>Heads</translation>
    </message>
</context>
<context>
    <name>LocalWorkers</name>
    <message>
        <location filename="../widgets/run/LocalWorkers.cpp" line="12"/>
        <source>A run with %1 workers starts the others with %2, which is missing or not executable.</source>
        <translation>Ein Lauf mit %1 Workern startet die übrigen mit %2; das Programm fehlt oder ist nicht ausführbar.</translation>
    </message>
    <message>
        <location filename="../widgets/run/LocalWorkers.cpp" line="57"/>
        <source>

Worker %1 ended (%2): %3</source>
        <translation>

Worker %1 beendet (%2): %3</translation>
    </message>
    <message>
        <location filename="../widgets/run/LocalWorkers.cpp" line="59"/>
        <source>crashed</source>
        <translation>abgestürzt</translation>
    </message>
    <message>
        <location filename="../widgets/run/LocalWorkers.cpp" line="59"/>
        <source>exit status %1</source>
        <translation>Exit-Status %1</translation>
    </message>
</context>
<context>
    <name>LogitLensPane</name>
    <message>
        <source>Logit lens: next-token loss of each layer&apos;s residual through the final norm</source>
        <translation>Logit Lens: Next-Token-Verlust des Residuums jeder Schicht durch die letzte Normierung</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="94"/>
        <source>Each layer&apos;s residual stream read through the final norm and the unembedding (the logit lens): its next-token loss with the norm recomputed on each layer, with the final layer&apos;s scale frozen, and with one scale for all tokens — against the starting model&apos;s, and one sequence&apos;s top tokens layer by layer. Without LayerNorm the three readings are one.</source>
        <translation>Der Residualstrom jeder Schicht, durch die letzte Normierung und die Unembedding-Matrix gelesen (Logit Lens): sein Next-Token-Verlust mit der Normierung je Schicht neu berechnet, mit dem Maßstab der letzten Schicht eingefroren und mit einem Maßstab für alle Tokens — gegen den des Ausgangsmodells, dazu die Top-Tokens einer Sequenz Schicht für Schicht. Ohne LayerNorm sind die drei Lesarten eine.</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="147"/>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="193"/>
        <source>final</source>
        <translation>final</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="162"/>
        <source>Final norm: %1 · model&apos;s loss %2 nats · first block&apos;s input, recomputed %3 / frozen %4 / linear %5</source>
        <translation>Letzte Normierung: %1 · Verlust des Modells %2 nats · Eingang des ersten Blocks: neu berechnet %3 / eingefroren %4 / linear %5</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="189"/>
        <source>input token at positions %1–%2</source>
        <translation>Eingabetoken an den Positionen %1–%2</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="193"/>
        <source>L%1</source>
        <translation>L%1</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="212"/>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="261"/>
        <source>starting model</source>
        <translation>Ausgangsmodell</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="212"/>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="260"/>
        <source>model now</source>
        <translation>Modell jetzt</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="213"/>
        <source>Top token by layer and position of sequence %1 (%2, %3; colour: its probability; hover a cell)</source>
        <translation>Top-Token nach Schicht und Position von Sequenz %1 (%2, %3; Farbe: seine Wahrscheinlichkeit; Zelle überfahren)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="232"/>
        <source>%1, position %2 “%3”</source>
        <translation>%1, Position %2 „%3“</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="233"/>
        <source>final residual</source>
        <translation>letztes Residuum</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="233"/>
        <source>input of block %1</source>
        <translation>Eingang von Block %1</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="243"/>
        <source>next token “%1”: probability %2, rank %3</source>
        <translation>nächstes Token „%1“: Wahrscheinlichkeit %2, Rang %3</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="251"/>
        <source>recomputed</source>
        <translation>neu berechnet</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="251"/>
        <source>frozen</source>
        <translation>eingefroren</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="251"/>
        <source>linear</source>
        <translation>linear</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="253"/>
        <source>norm %1</source>
        <translation>Normierung %1</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="255"/>
        <source>%1, starting model</source>
        <translation>%1, Ausgangsmodell</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="258"/>
        <source>recomputed: the final norm&apos;s scale computed on each layer&apos;s residual; frozen: the scale the model used at the final layer; linear: one scale for all tokens</source>
        <translation>neu berechnet: der Maßstab der letzten Normierung auf dem Residuum jeder Schicht berechnet; eingefroren: der Maßstab, den das Modell in der letzten Schicht verwendet hat; linear: ein Maßstab für alle Tokens</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="268"/>
        <source>sequence </source>
        <translation>Sequenz </translation>
    </message>
    <message>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="269"/>
        <source>the validation sequence whose top tokens the grid shows</source>
        <translation>die Validierungssequenz, deren Top-Tokens das Raster zeigt</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="270"/>
        <source>Logit lens: next-token loss of each layer&apos;s residual through the final norm (dashed: starting model)</source>
        <translation>Logit Lens: Next-Token-Verlust des Residuums jeder Schicht durch die letzte Normierung (gestrichelt: Ausgangsmodell)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="272"/>
        <source>layer (resid_pre)</source>
        <translation>Schicht (resid_pre)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="273"/>
        <source>cross-entropy (nats)</source>
        <translation>Kreuzentropie (nats)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="274"/>
        <source>probability of the top token</source>
        <translation>Wahrscheinlichkeit des Top-Tokens</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="275"/>
        <source>top-token probability</source>
        <translation>Top-Token-Wahrscheinlichkeit</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/LogitLensPane.cpp" line="280"/>
        <source>Top token by layer and position</source>
        <translation>Top-Token nach Schicht und Position</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/LogitLensPane.h" line="21"/>
        <source>Logit lens</source>
        <translation>Logit Lens</translation>
    </message>
</context>
<context>
    <name>AnalysisGroup</name>
    <message>
        <location filename="../widgets/analysis/AnalysisPanes.cpp" line="35"/>
        <source>Heads and circuits</source>
        <translation>Heads und Schaltkreise</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPanes.cpp" line="36"/>
        <source>Residual stream</source>
        <translation>Residualstrom</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/AnalysisPanes.cpp" line="37"/>
        <source>Behaviour</source>
        <translation>Verhalten</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>The run cannot start as it is set up.</source>
        <translation>Der Lauf kann so, wie er eingerichtet ist, nicht starten.</translation>
    </message>
    <message>
        <source>Cannot start the run</source>
        <translation>Lauf kann nicht starten</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="186"/>
        <source>Opened %1</source>
        <translation>%1 geöffnet</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="96"/>
        <source>Connected to the run %1 at %2</source>
        <translation>Mit dem Lauf %1 auf %2 verbunden</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="102"/>
        <source>Cannot connect</source>
        <translation>Keine Verbindung</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="102"/>
        <source>The run could not be reached or read.</source>
        <translation>Der Lauf war nicht erreichbar oder nicht lesbar.</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="85"/>
        <source>Training stopped</source>
        <translation>Training abgebrochen</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="86"/>
        <source>The run could not go on. Its last checkpoint is kept; fix the cause and press Resume.</source>
        <translation>Der Lauf konnte nicht fortgesetzt werden. Sein letzter Checkpoint bleibt erhalten; beheben Sie die Ursache und klicken Sie auf „Fortsetzen“.</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="176"/>
        <location filename="../widgets/window/MainWindow.cpp" line="193"/>
        <source>A run is in progress</source>
        <translation>Ein Lauf ist aktiv</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="176"/>
        <source>Stop the run before opening another model.</source>
        <translation>Stoppen Sie den Lauf, bevor Sie ein anderes Modell öffnen.</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="172"/>
        <source>Cannot open model folder</source>
        <translation>Modellordner kann nicht geöffnet werden</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="126"/>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="127"/>
        <source>Run %1 — %2</source>
        <translation>Lauf %1 — %2</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="129"/>
        <source>Run %1 at %2 — %3</source>
        <translation>Lauf %1 auf %2 — %3</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="130"/>
        <source>(connecting)</source>
        <translation>(wird verbunden)</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="172"/>
        <source>The model folder could not be opened.</source>
        <translation>Der Modellordner konnte nicht geöffnet werden.</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="193"/>
        <source>Stop the run before connecting to another.</source>
        <translation>Halten Sie den Lauf an, bevor Sie sich mit einem anderen verbinden.</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="202"/>
        <source>Connecting to %1…</source>
        <translation>Verbinde mit %1 …</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="227"/>
        <source>Following %1</source>
        <translation>%1 wird verfolgt</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="232"/>
        <source>Cannot open run</source>
        <translation>Lauf kann nicht geöffnet werden</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="232"/>
        <source>The run directory could not be opened.</source>
        <translation>Das Laufverzeichnis konnte nicht geöffnet werden.</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="250"/>
        <source>Loaded schedule %1</source>
        <translation>Zeitplan %1 geladen</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="253"/>
        <location filename="../widgets/window/MainWindow.cpp" line="255"/>
        <source>Cannot load schedule</source>
        <translation>Zeitplan kann nicht geladen werden</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="253"/>
        <source>The schedule file is not valid JSON.</source>
        <translation>Die Zeitplandatei ist kein gültiges JSON.</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="255"/>
        <source>The schedule could not be used.</source>
        <translation>Der Zeitplan konnte nicht verwendet werden.</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="267"/>
        <source>Cannot use these datasets</source>
        <translation>Diese Datensätze können nicht verwendet werden</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="267"/>
        <source>A dataset could not be read.</source>
        <translation>Ein Datensatz konnte nicht gelesen werden.</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="275"/>
        <source>Open a model folder first (File › Open Model Folder).</source>
        <translation>Öffnen Sie zuerst einen Modellordner (Datei › Modellordner öffnen).</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="275"/>
        <source>No model open</source>
        <translation>Kein Modell geöffnet</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="295"/>
        <source>Starting %1</source>
        <translation>%1 wird gestartet</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="338"/>
        <source>Export incomplete</source>
        <translation>Export unvollständig</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="357"/>
        <source>Stopping the run and writing its checkpoint…</source>
        <translation>Lauf wird gestoppt und sein Checkpoint geschrieben…</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="370"/>
        <source>Runs</source>
        <translation>Läufe</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="124"/>
        <source>NormFree Workbench</source>
        <translation>NormFree Workbench</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="370"/>
        <source>Removal timeline</source>
        <translation>Zeitleiste der Entfernungen</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="370"/>
        <source>Run setup</source>
        <translation>Laufkonfiguration</translation>
    </message>
    <message>
        <location filename="../widgets/window/MainWindow.cpp" line="370"/>
        <source>Model</source>
        <translation>Modell</translation>
    </message>
</context>
<context>
    <name>MenuCommands</name>
    <message>
        <location filename="../widgets/window/MenuCommands.cpp" line="20"/>
        <source>Open Model Folder</source>
        <translation>Modellordner öffnen</translation>
    </message>
    <message>
        <location filename="../widgets/window/MenuCommands.cpp" line="25"/>
        <source>Open Run Directory</source>
        <translation>Laufverzeichnis öffnen</translation>
    </message>
    <message>
        <location filename="../widgets/window/MenuCommands.cpp" line="33"/>
        <source>Open Schedule</source>
        <translation>Zeitplan öffnen</translation>
    </message>
    <message>
        <location filename="../widgets/window/MenuCommands.cpp" line="34"/>
        <source>Schedules (*.json);;All files (*)</source>
        <translation>Zeitpläne (*.json);;Alle Dateien (*)</translation>
    </message>
    <message>
        <location filename="../widgets/window/MenuCommands.cpp" line="43"/>
        <source>Folder for the Next Run</source>
        <translation>Ordner für den nächsten Lauf</translation>
    </message>
    <message>
        <location filename="../widgets/window/MenuCommands.cpp" line="50"/>
        <source>Export All Figures To</source>
        <translation>Alle Abbildungen exportieren nach</translation>
    </message>
</context>
<context>
    <name>ModelInfoView</name>
    <message>
        <location filename="../widgets/views/ModelInfoView.cpp" line="23"/>
        <location filename="../widgets/views/ModelInfoView.cpp" line="98"/>
        <source>LayerNorm</source>
        <translation>LayerNorm</translation>
    </message>
    <message>
        <location filename="../widgets/views/ModelInfoView.cpp" line="24"/>
        <source>FakeLN</source>
        <translation>FakeLN</translation>
    </message>
    <message>
        <location filename="../widgets/views/ModelInfoView.cpp" line="25"/>
        <location filename="../widgets/views/ModelInfoView.cpp" line="97"/>
        <source>RMSNorm</source>
        <translation>RMSNorm</translation>
    </message>
    <message>
        <location filename="../widgets/views/ModelInfoView.cpp" line="26"/>
        <source>FakeRMSNorm</source>
        <translation>FakeRMSNorm</translation>
    </message>
    <message>
        <location filename="../widgets/views/ModelInfoView.cpp" line="27"/>
        <source>LN Scaling</source>
        <translation>LN-Skalierung</translation>
    </message>
    <message>
        <location filename="../widgets/views/ModelInfoView.cpp" line="28"/>
        <source>Identity</source>
        <translation>Identität</translation>
    </message>
    <message>
        <location filename="../widgets/views/ModelInfoView.cpp" line="103"/>
        <source>&lt;b&gt;At step %1 of the run: %2-free&lt;/b&gt; — every site has a frozen scale.</source>
        <translation>&lt;b&gt;Bei Schritt %1 des Laufs: %2-frei&lt;/b&gt; — jede Stelle hat eine eingefrorene Skala.</translation>
    </message>
    <message>
        <location filename="../widgets/views/ModelInfoView.cpp" line="111"/>
        <source>%1-free: no site divides by a per-token statistic.</source>
        <translation>%1-frei: keine Stelle teilt durch eine Statistik je Token.</translation>
    </message>
    <message>
        <location filename="../widgets/views/ModelInfoView.cpp" line="125"/>
        <source>Connecting to %1…</source>
        <translation>Verbinde mit %1 …</translation>
    </message>
    <message>
        <location filename="../widgets/views/ModelInfoView.cpp" line="126"/>
        <source>This run&apos;s model is on the machine that trains it (%1), not in a folder here: its removal events are on the timeline, its losses and scales on the plots, and the analysis panes compute on that machine.</source>
        <translation>Das Modell dieses Laufs liegt auf dem Rechner, der ihn trainiert (%1), nicht in einem Ordner hier: seine Entfernungsereignisse stehen auf der Zeitleiste, seine Verluste und Skalen in den Diagrammen, und die Analysen rechnen auf jenem Rechner.</translation>
    </message>
    <message>
        <location filename="../widgets/views/ModelInfoView.cpp" line="136"/>
        <source>No model open</source>
        <translation>Kein Modell geöffnet</translation>
    </message>
    <message>
        <location filename="../widgets/views/ModelInfoView.cpp" line="138"/>
        <source>Open a model folder (Hugging Face layout of GPT-2, Pythia, LLaMA or Qwen2: config.json and safetensors) with File › Open Model Folder…</source>
        <translation>Öffnen Sie einen Modellordner (Hugging-Face-Layout von GPT-2, Pythia, LLaMA oder Qwen2: config.json und safetensors) über Datei › Modellordner öffnen…</translation>
    </message>
    <message>
        <location filename="../widgets/views/ModelInfoView.cpp" line="148"/>
        <source>The run&apos;s model, started from %1</source>
        <translation>Das Modell des Laufs, ausgehend von %1</translation>
    </message>
    <message>
        <location filename="../widgets/views/ModelInfoView.cpp" line="150"/>
        <source>%9 · %1 layers · %2 heads · d_model %3 · context %4 · vocabulary %5 · %6 parameters · %7 MB in %8 file(s)</source>
        <translation>%9 · %1 Schichten · %2 Heads · d_model %3 · Kontext %4 · Vokabular %5 · %6 Parameter · %7 MB in %8 Datei(en)</translation>
    </message>
    <message>
        <location filename="../widgets/views/ModelInfoView.cpp" line="106"/>
        <source>&lt;b&gt;At step %1 of the run:&lt;/b&gt; %2 of %3 sites still normalize per token.</source>
        <translation>&lt;b&gt;Bei Schritt %1 des Laufs:&lt;/b&gt; %2 von %3 Stellen normalisieren noch pro Token.</translation>
    </message>
    <message>
        <location filename="../widgets/views/ModelInfoView.cpp" line="112"/>
        <source>Normalization per site (LN_qk and LN_v are the attention norm as seen by queries/keys and by values):</source>
        <translation>Normalisierung je Stelle (LN_qk und LN_v sind die Attention-Norm aus Sicht von Queries/Keys bzw. Values):</translation>
    </message>
    <message>
        <location filename="../widgets/views/ModelInfoView.cpp" line="177"/>
        <source>LN_qk</source>
        <translation>LN_qk</translation>
    </message>
    <message>
        <location filename="../widgets/views/ModelInfoView.cpp" line="177"/>
        <source>LN_v</source>
        <translation>LN_v</translation>
    </message>
    <message>
        <location filename="../widgets/views/ModelInfoView.cpp" line="177"/>
        <source>LN_mlp</source>
        <translation>LN_mlp</translation>
    </message>
    <message>
        <location filename="../widgets/views/ModelInfoView.cpp" line="178"/>
        <source>ln_1 as seen by the queries and keys</source>
        <translation>ln_1, wie Queries und Keys es sehen</translation>
    </message>
    <message>
        <location filename="../widgets/views/ModelInfoView.cpp" line="179"/>
        <source>ln_1 as seen by the values</source>
        <translation>ln_1, wie die Values es sehen</translation>
    </message>
    <message>
        <location filename="../widgets/views/ModelInfoView.cpp" line="180"/>
        <source>ln_2, before the MLP</source>
        <translation>ln_2, vor dem MLP</translation>
    </message>
    <message>
        <location filename="../widgets/views/ModelInfoView.cpp" line="193"/>
        <source>s = %1</source>
        <translation>s = %1</translation>
    </message>
    <message>
        <location filename="../widgets/views/ModelInfoView.cpp" line="183"/>
        <source>block %1</source>
        <translation>Block %1</translation>
    </message>
    <message>
        <location filename="../widgets/views/ModelInfoView.cpp" line="184"/>
        <source>final (LN_f)</source>
        <translation>final (LN_f)</translation>
    </message>
    <message>
        <location filename="../widgets/views/ModelInfoView.cpp" line="194"/>
        <source> · pos 0: %1</source>
        <translation> · Pos. 0: %1</translation>
    </message>
    <message>
        <location filename="../widgets/views/ModelInfoView.cpp" line="195"/>
        <source> · EOT</source>
        <translation> · EOT</translation>
    </message>
</context>
<context>
    <name>NeuronsPane</name>
    <message>
        <location filename="../widgets/analysis/NeuronsPane.cpp" line="73"/>
        <source>The last MLP layer&apos;s confidence neurons: output norm against logit variance, the effect of ablating the top ones on loss and entropy, and their alignment with the unembedding&apos;s singular directions.</source>
        <translation>Die Konfidenzneuronen der letzten MLP-Schicht: Ausgangsnorm gegen Logit-Varianz, die Wirkung der Ablation der stärksten auf Verlust und Entropie und ihre Ausrichtung an den Singulärrichtungen der Unembedding-Matrix.</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/NeuronsPane.cpp" line="146"/>
        <source>|cos| of neuron %1</source>
        <translation>|cos| von Neuron %1</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/NeuronsPane.cpp" line="197"/>
        <source>Last MLP layer: output norm vs LogitVar (red: top %1 by CN score)</source>
        <translation>Letzte MLP-Schicht: Ausgabenorm vs. LogitVar (rot: Top %1 nach CN-Score)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/NeuronsPane.cpp" line="198"/>
        <source>‖w_out‖</source>
        <translation>‖w_out‖</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/NeuronsPane.cpp" line="199"/>
        <source>LogitVar</source>
        <translation>LogitVar</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/NeuronsPane.cpp" line="200"/>
        <source>neurons</source>
        <translation>Neuronen</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/NeuronsPane.cpp" line="201"/>
        <source>top by CN score = ‖w_out‖ / LogitVar</source>
        <translation>Top nach CN-Score = ‖w_out‖ / LogitVar</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/NeuronsPane.cpp" line="202"/>
        <source>Mean ablation of each top neuron</source>
        <translation>Mean-Ablation jedes Top-Neurons</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/NeuronsPane.cpp" line="203"/>
        <source>neuron (by CN rank)</source>
        <translation>Neuron (nach CN-Rang)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/NeuronsPane.cpp" line="204"/>
        <source>change (nats)</source>
        <translation>Änderung (Nats)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/NeuronsPane.cpp" line="205"/>
        <source>Δ loss</source>
        <translation>Δ Verlust</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/NeuronsPane.cpp" line="206"/>
        <source>Δ entropy</source>
        <translation>Δ Entropie</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/NeuronsPane.cpp" line="207"/>
        <source>W_U singular values and top neurons&apos; |cosine| to each direction</source>
        <translation>Singulärwerte von W_U und |Kosinus| der Top-Neuronen zu jeder Richtung</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/NeuronsPane.cpp" line="208"/>
        <source>singular direction (descending)</source>
        <translation>Singulärrichtung (absteigend)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/NeuronsPane.cpp" line="209"/>
        <location filename="../widgets/analysis/NeuronsPane.cpp" line="211"/>
        <source>singular value</source>
        <translation>Singulärwert</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/NeuronsPane.cpp" line="210"/>
        <source>|cosine|</source>
        <translation>|Kosinus|</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/NeuronsPane.h" line="13"/>
        <source>Confidence neurons</source>
        <translation>Konfidenzneuronen</translation>
    </message>
</context>
<context>
    <name>NextRun</name>
    <message>
        <source>The datasets chosen are set aside, the synthetic corpus made for this model used instead: %1</source>
        <translation>Die gewählten Datensätze sind beiseitegelegt, stattdessen wird der für dieses Modell erzeugte synthetische Korpus verwendet: %1</translation>
    </message>
    <message>
        <source>The preset %1&apos;s schedule replaced the draft, with its edits.</source>
        <translation>Der Zeitplan des Presets %1 hat den Entwurf samt seinen Änderungen ersetzt.</translation>
    </message>
    <message>
        <source>The memory plan&apos;s micro-batch cannot be shared: %1</source>
        <translation>Der Micro-Batch des Speicherplans lässt sich nicht aufteilen: %1</translation>
    </message>
    <message>
        <source>%1 holds a run already: open it with File › Open Run, or choose another folder.</source>
        <translation>%1 enthält bereits einen Lauf: öffnen Sie ihn mit Datei › Lauf öffnen, oder wählen Sie einen anderen Ordner.</translation>
    </message>
    <message>
        <source>The memory plan: %1</source>
        <translation>Der Speicherplan: %1</translation>
    </message>
    <message>
        <source>%1. Choose token files made with this model&apos;s tokenizer (File › Choose Datasets), or none for the synthetic corpus made for it.</source>
        <translation>%1. Wählen Sie Token-Dateien, die mit dem Tokenizer dieses Modells erstellt wurden (Datei › Datensätze wählen), oder keine für das dafür erstellte synthetische Korpus.</translation>
    </message>
    <message>
        <source>The schedule does not fit the run: %1</source>
        <translation>Der Zeitplan passt nicht zum Lauf: %1</translation>
    </message>
    <message>
        <source>The preset %1&apos;s schedule is made for %2 layers; this model has %3, whose other sites would keep their norms: choose %4, made for its depth, or edit the schedule on the timeline.</source>
        <translation>Der Zeitplan des Presets %1 ist für %2 Schichten gemacht; dieses Modell hat %3, deren übrige Stellen ihre Norm behielten: wählen Sie %4, für seine Tiefe gemacht, oder bearbeiten Sie den Zeitplan in der Zeitleiste.</translation>
    </message>
    <message>
        <location filename="../widgets/window/NextRun.cpp" line="44"/>
        <source>The preset %1 is made for %2 layers; this model has %3. Choose another preset.</source>
        <translation>Das Preset %1 ist für %2 Schichten gedacht; dieses Modell hat %3. Wählen Sie ein anderes Preset.</translation>
    </message>
    <message numerus="yes">
        <location filename="../widgets/window/NextRun.cpp" line="67"/>
        <source>%n event(s) past the last step were set aside: they come back when the steps reach them again</source>
        <translation>
            <numerusform>%n Ereignis nach dem letzten Schritt wurde beiseitegelegt: Es kommt zurück, sobald die Schritte es wieder erreichen</numerusform>
            <numerusform>%n Ereignisse nach dem letzten Schritt wurden beiseitegelegt: Sie kommen zurück, sobald die Schritte sie wieder erreichen</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../widgets/window/NextRun.cpp" line="81"/>
        <source>train %1, eval %2%3</source>
        <translation>Training %1, Evaluierung %2%3</translation>
    </message>
</context>
<context>
    <name>NormsPane</name>
    <message>
        <source>Residual stream norm per layer: position 0 vs the rest (band: 10th–90th percentile)</source>
        <translation>Norm des Residualstroms je Schicht: Position 0 vs. übrige (Band: 10.–90. Perzentil)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/NormsPane.cpp" line="44"/>
        <source>The residual stream&apos;s norm entering each layer, at position 0 and at the other positions, on validation sequences, against the starting model&apos;s: the norm growth that FakeLN freezes.</source>
        <translation>Die Norm des Residualstroms vor jeder Schicht, an Position 0 und an den übrigen Positionen, auf Validierungssequenzen, verglichen mit dem Ausgangsmodell: das Normwachstum, das FakeLN einfriert.</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/NormsPane.cpp" line="66"/>
        <source>final</source>
        <translation>final</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/NormsPane.cpp" line="93"/>
        <source>Residual stream norm per layer: position 0 vs the rest (band: 10th–90th percentile; dashed: starting model)</source>
        <translation>Norm des Residualstroms je Schicht: Position 0 vs. übrige (Band: 10.–90. Perzentil; gestrichelt: Ausgangsmodell)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/NormsPane.cpp" line="95"/>
        <source>layer (resid_pre)</source>
        <translation>Schicht (resid_pre)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/NormsPane.cpp" line="96"/>
        <source>L2 norm of the residual</source>
        <translation>L2-Norm des Residualstroms</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/NormsPane.cpp" line="97"/>
        <source>position 0</source>
        <translation>Position 0</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/NormsPane.cpp" line="98"/>
        <source>position 0, starting model</source>
        <translation>Position 0, Ausgangsmodell</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/NormsPane.cpp" line="99"/>
        <source>other positions</source>
        <translation>übrige Positionen</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/NormsPane.cpp" line="100"/>
        <source>other positions, starting model</source>
        <translation>übrige Positionen, Ausgangsmodell</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/NormsPane.h" line="12"/>
        <source>Residual norms</source>
        <translation>Residualnormen</translation>
    </message>
</context>
<context>
    <name>PatchingPane</name>
    <message>
        <location filename="../widgets/analysis/PatchingPane.cpp" line="78"/>
        <source>Activation patching and attribution patching on the indirect-object prompts, layer by position and layer by head, and their difference: how far the linear estimate is from the real effect.</source>
        <translation>Activation Patching und Attribution Patching auf den Indirect-Object-Prompts, Schicht × Position und Schicht × Head, und ihre Differenz: wie weit die lineare Schätzung vom echten Effekt entfernt ist.</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/PatchingPane.cpp" line="133"/>
        <location filename="../widgets/analysis/PatchingPane.cpp" line="135"/>
        <source>head</source>
        <translation>Kopf</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/PatchingPane.cpp" line="133"/>
        <source>position in the prompt</source>
        <translation>Position im Prompt</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/PatchingPane.cpp" line="136"/>
        <source>layer</source>
        <translation>Schicht</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/PatchingPane.cpp" line="140"/>
        <source>%1 prompts like the one below · clean logit difference %2, corrupted %3</source>
        <translation>%1 Prompts wie der folgende · saubere Logit-Differenz %2, verfälscht %3</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/PatchingPane.cpp" line="160"/>
        <source>Clean: %1&lt;br&gt;Corrupted: %2</source>
        <translation>Sauber: %1&lt;br&gt;Korrumpiert: %2</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/PatchingPane.cpp" line="164"/>
        <source>&lt;b&gt;%1 × %2&lt;/b&gt;: activation %3 · attribution %4 · error %5</source>
        <translation>&lt;b&gt;%1 × %2&lt;/b&gt;: Aktivierung %3 · Attribution %4 · Fehler %5</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/PatchingPane.cpp" line="171"/>
        <source>Click a cell to mark its position in the prompt.</source>
        <translation>Zelle anklicken, um ihre Position im Prompt zu markieren.</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/PatchingPane.cpp" line="179"/>
        <source>resid_pre: layer × position</source>
        <translation>resid_pre: Schicht × Position</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/PatchingPane.cpp" line="180"/>
        <source>heads: layer × head</source>
        <translation>Heads: Schicht × Head</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/PatchingPane.cpp" line="181"/>
        <source>IOI patching, normalized logit difference (0 corrupted, 1 clean): activation, attribution and their error (attribution − activation)</source>
        <translation>IOI-Patching, normierte Logit-Differenz (0 verfälscht, 1 sauber): Aktivierung, Attribution und ihr Fehler (Attribution − Aktivierung)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/PatchingPane.cpp" line="183"/>
        <source>error</source>
        <translation>Fehler</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/PatchingPane.cpp" line="183"/>
        <source>activation patching</source>
        <translation>Activation Patching</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/PatchingPane.cpp" line="183"/>
        <source>attribution patching</source>
        <translation>Attribution Patching</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/PatchingPane.cpp" line="191"/>
        <source>Compute to see the prompts.</source>
        <translation>Berechnen, um die Prompts zu sehen.</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/PatchingPane.h" line="17"/>
        <source>Patching</source>
        <translation>Patching</translation>
    </message>
</context>
<context>
    <name>QCustomPlot</name>
    <message>
        <location filename="../widgets/views/Plots.cpp" line="101"/>
        <source>Export Figure…</source>
        <translation>Abbildung exportieren…</translation>
    </message>
    <message>
        <location filename="../widgets/views/Plots.cpp" line="102"/>
        <source>Reset View</source>
        <translation>Ansicht zurücksetzen</translation>
    </message>
    <message>
        <location filename="../widgets/views/Plots.cpp" line="425"/>
        <source>Cannot write %1: %2</source>
        <translation>%1 kann nicht geschrieben werden: %2</translation>
    </message>
    <message>
        <location filename="../widgets/views/Plots.cpp" line="434"/>
        <source>PNG encoding failed</source>
        <translation>PNG-Kodierung fehlgeschlagen</translation>
    </message>
    <message>
        <location filename="../widgets/views/Plots.cpp" line="445"/>
        <source>SVG painter failed</source>
        <translation>SVG-Ausgabe fehlgeschlagen</translation>
    </message>
    <message>
        <location filename="../widgets/views/Plots.cpp" line="461"/>
        <source>PDF rendering failed</source>
        <translation>PDF-Rendering fehlgeschlagen</translation>
    </message>
    <message>
        <location filename="../widgets/views/Plots.cpp" line="469"/>
        <source>unknown format &apos;%1&apos; (png, svg, pdf or csv)</source>
        <translation>unbekanntes Format &apos;%1&apos; (png, svg, pdf oder csv)</translation>
    </message>
    <message>
        <location filename="../widgets/views/Plots.cpp" line="478"/>
        <source>Export Figure</source>
        <translation>Abbildung exportieren</translation>
    </message>
    <message>
        <location filename="../widgets/views/Plots.cpp" line="479"/>
        <source>PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf);;CSV data (*.csv)</source>
        <translation>PNG-Bild (*.png);;SVG-Zeichnung (*.svg);;PDF-Dokument (*.pdf);;CSV-Daten (*.csv)</translation>
    </message>
    <message>
        <location filename="../widgets/views/Plots.cpp" line="484"/>
        <source>Export failed</source>
        <translation>Export fehlgeschlagen</translation>
    </message>
</context>
<context>
    <name>QObject</name>
    <message>
        <location filename="../widgets/analysis/TokenViews.cpp" line="75"/>
        <source>unknown format &apos;%1&apos; (svg, png or csv)</source>
        <translation>unbekanntes Format &apos;%1&apos; (svg, png oder csv)</translation>
    </message>
</context>
<context>
    <name>RunSession</name>
    <message>
        <location filename="../widgets/run/RunSession.cpp" line="257"/>
        <source>The run at %1 answered its status malformed: %2</source>
        <translation>Der Lauf auf %1 hat einen fehlerhaften Status geantwortet: %2</translation>
    </message>
</context>
<context>
    <name>RunSetupView</name>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="112"/>
        <source>6-layer models of 256 tokens (the small-models sweep): LN_mlp, LN_qk one layer every 15 steps, LN_v every 20, LN_f, then recovery; 32×256 tokens per step</source>
        <translation>Modelle mit 6 Schichten und 256 Token (der Small-Models-Sweep): LN_mlp, LN_qk je eine Schicht alle 15 Schritte, LN_v alle 20, LN_f, dann Erholung; 32×256 Token pro Schritt</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="116"/>
        <source>the blog&apos;s v2 recipe for GPT-2 Small: ln_2, ln_1 qk, ln_1 v, ln_f (all layers at once) with position-0 and end-of-text treatments, then EOT off, then position 0 off</source>
        <translation>das v2-Rezept des Blogs für GPT-2 Small: ln_2, ln_1 qk, ln_1 v, ln_f (alle Schichten auf einmal) mit Position-0- und Textende-Behandlung, dann EOT aus, dann Position 0 aus</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="120"/>
        <source>Pythia-70M (Appendix C): GPT-2 Small&apos;s settings, the schedule by the depth rule for 6 blocks (LN_mlp from step 20, LN_qk from 32, LN_v from 44, LN_f at 62)</source>
        <translation>Pythia-70M (Anhang C): die Einstellungen von GPT-2 Small, der Zeitplan nach der Tiefenregel für 6 Blöcke (LN_mlp ab Schritt 20, LN_qk ab 32, LN_v ab 44, LN_f bei 62)</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="124"/>
        <source>any model: GPT-2 Small&apos;s settings with the paper&apos;s schedule rule for the model&apos;s depth (the rule that gives Table 4&apos;s schedules for 12 to 48 blocks)</source>
        <translation>jedes Modell: die Einstellungen von GPT-2 Small mit der Zeitplanregel des Papers für die Tiefe des Modells (die Regel, die die Zeitpläne aus Tabelle 4 für 12 bis 48 Blöcke ergibt)</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="128"/>
        <source>the paper&apos;s schedule for %1 (Table 4): %2×%3 sequences of 1024 tokens per step</source>
        <translation>der Zeitplan des Papers für %1 (Tabelle 4): %2×%3 Sequenzen zu 1024 Token pro Schritt</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="290"/>
        <source>cannot plan for %1: %2</source>
        <translation>keine Planung für %1 möglich: %2</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="292"/>
        <source>does not fit in the %1 free on %2: %3</source>
        <translation>passt nicht in die %1, die auf %2 frei sind: %3</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="295"/>
        <source>%1 predicted of %2 free · micro-batch %3 × %4 · activation checkpointing %5</source>
        <translation>%1 vorhergesagt von %2 frei · Micro-Batch %3 × %4 · Activation Checkpointing %5</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="300"/>
        <source>on</source>
        <translation>an</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="300"/>
        <source>off</source>
        <translation>aus</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="108"/>
        <source>4-layer models such as the bundled tiny GPT-2 and LLaMA: the MLP, QK and V norms one layer every 10 steps, then the final norm, then recovery; 32×128 tokens per step</source>
        <translation>4-Schicht-Modelle wie das mitgelieferte kleine GPT-2 und LLaMA: die MLP-, QK- und V-Normen alle 10 Schritte eine Schicht, dann die letzte Norm, dann Erholung; 32×128 Token pro Schritt</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="225"/>
        <source>&lt;i&gt;The run&apos;s settings come with its first answer.&lt;/i&gt;</source>
        <translation>&lt;i&gt;Die Einstellungen des Laufs kommen mit seiner ersten Antwort.&lt;/i&gt;</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="222"/>
        <source>&lt;b&gt;The run shown was set up with&lt;/b&gt;&lt;br&gt;%1 · preset %2 · %3 steps · %4&lt;br&gt;micro-batch %5 × %6 sequences of %7 tokens · learning rate %8 → %9 · warm-up %10 steps&lt;br&gt;data: %11; evaluated on %12&lt;p&gt;&lt;i&gt;Its settings are its own (config.json). To set up a new run, open a model (File › Open Model Folder or Open Recent).&lt;/i&gt;</source>
        <translation>&lt;b&gt;Der angezeigte Lauf wurde eingerichtet mit&lt;/b&gt;&lt;br&gt;%1 · Preset %2 · %3 Schritte · %4&lt;br&gt;Mikro-Batch %5 × %6 Sequenzen zu %7 Token · Lernrate %8 → %9 · Aufwärmen %10 Schritte&lt;br&gt;Daten: %11; ausgewertet auf %12&lt;p&gt;&lt;i&gt;Seine Einstellungen sind seine eigenen (config.json). Für einen neuen Lauf ein Modell öffnen (Datei › Modellordner öffnen oder Zuletzt geöffnet).&lt;/i&gt;</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="235"/>
        <source>the synthetic corpus</source>
        <translation>dem synthetischen Korpus</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="148"/>
        <location filename="../widgets/views/RunSetupView.cpp" line="151"/>
        <location filename="../widgets/views/RunSetupView.cpp" line="238"/>
        <source>nothing</source>
        <translation>nichts</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="152"/>
        <source>Analyses measured while the run trains, every twentieth of the run and at each removal event, and plotted under the training curves: %1</source>
        <translation>Analysen, die während des Laufs gemessen werden – jedes Zwanzigstel des Laufs und bei jedem Entfernungsereignis – und unter den Trainingskurven gezeichnet: %1</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="238"/>
        <source>its validation sets, made with it</source>
        <translation>seinen Validierungsdaten, die mit ihm entstehen</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="242"/>
        <source>removals timed by the autopilot: within %1 nats, %2–%3 steps apart, up to %4 at once</source>
        <translation>Entfernungen vom Autopiloten getaktet: innerhalb %1 Nats, %2–%3 Schritte Abstand, bis zu %4 zugleich</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="248"/>
        <source>; then training until the loss, averaged over %1 steps at a time, stops improving</source>
        <translation>; danach Training, bis der Verlust, über je %1 Schritte gemittelt, nicht mehr sinkt</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="253"/>
        <source>tracked: %1, every %2 steps and at each removal</source>
        <translation>verfolgt: %1, alle %2 Schritte und bei jeder Entfernung</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="254"/>
        <source>tracked: %1, at every step</source>
        <translation>verfolgt: %1, bei jedem Schritt</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="314"/>
        <source>remove the norms (the protocol)</source>
        <translation>Normen entfernen (das Protokoll)</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="315"/>
        <source>fine-tune, nothing removed (control)</source>
        <translation>Fine-Tuning, nichts entfernt (Kontrolle)</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="316"/>
        <source>The vanilla control uses the same data, learning rate and steps</source>
        <translation>Die Vanilla-Kontrolle verwendet dieselben Daten, dieselbe Lernrate und dieselben Schritte</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="320"/>
        <source>Mode</source>
        <translation>Modus</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="321"/>
        <source>Preset</source>
        <translation>Preset</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="322"/>
        <source>Steps</source>
        <translation>Schritte</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="323"/>
        <source>Device</source>
        <translation>Gerät</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="324"/>
        <source>Workers</source>
        <translation>Worker</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="325"/>
        <source>Timing</source>
        <translation>Zeitpunkte</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="326"/>
        <source>Track</source>
        <translation>Verfolgen</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="330"/>
        <source>Autopilot: each removal when the loss has recovered</source>
        <translation>Autopilot: jede Entfernung, sobald sich der Verlust erholt hat</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="332"/>
        <source>The schedule gives the order of the removals and the first one&apos;s step; each later one fires once the smoothed loss is back within 0.02 nats of its level before the last (at least 10, at most 80 steps later), several sites of a kind at once when recovery is quick. The timeline shows its decisions as they are made (docs/TRAINING.md, &quot;The autopilot&quot;).</source>
        <translation>Der Plan gibt die Reihenfolge der Entfernungen und den Schritt der ersten vor; jede weitere folgt, sobald der geglättete Verlust wieder höchstens 0,02 Nats über seinem Stand vor der letzten liegt (frühestens 10, spätestens 80 Schritte danach), bei schneller Erholung mehrere Stellen einer Art zugleich. Die Zeitleiste zeigt seine Entscheidungen, sobald sie fallen (docs/TRAINING.md, „The autopilot“).</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="336"/>
        <source>Memory</source>
        <translation>Speicher</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="337"/>
        <source>Data</source>
        <translation>Daten</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="338"/>
        <source>Run folder</source>
        <translation>Laufordner</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="340"/>
        <source>synthetic corpus (seed 1), tokenized with the model&apos;s tokenizer; made on the first start</source>
        <translation>synthetischer Korpus (Seed 1), mit dem Tokenizer des Modells tokenisiert; wird beim ersten Start erzeugt</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="343"/>
        <source>a new folder per run</source>
        <translation>ein neuer Ordner pro Lauf</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="344"/>
        <source>cpu, cuda or cuda:N</source>
        <translation>cpu, cuda oder cuda:N</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="346"/>
        <source>Processes that train this run together, each on its share of every batch, with the same result as one: on cuda one per GPU, on the CPU several processes (on a machine with few cores two processes can use them better than one). The batch must split evenly over them.</source>
        <translation>Prozesse, die diesen Lauf gemeinsam trainieren, jeder mit seinem Anteil an jedem Batch, mit demselben Ergebnis wie einer: auf cuda einer pro GPU, auf der CPU mehrere Prozesse (auf einem Rechner mit wenigen Kernen nutzen zwei Prozesse sie besser als einer). Der Batch muss sich gleichmäßig auf sie aufteilen.</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunSetupView.cpp" line="353"/>
        <source>The peak memory of a training step predicted on this device, and the micro-batch × accumulation and activation checkpointing that Start uses: they keep the preset&apos;s sequences per step and fit %1% of the free memory.</source>
        <translation>Der für einen Trainingsschritt auf diesem Gerät vorhergesagte Spitzenspeicher sowie Micro-Batch × Akkumulation und Activation Checkpointing, die „Starten“ verwendet: Sie behalten die Sequenzen pro Schritt des Presets bei und passen in %1 % des freien Speichers.</translation>
    </message>
</context>
<context>
    <name>RunStatusBar</name>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="43"/>
        <source>Followed run finished</source>
        <translation>Verfolgter Lauf abgeschlossen</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="44"/>
        <source>Followed run finished early, at step %1</source>
        <translation>Verfolgter Lauf vorzeitig beendet, bei Schritt %1</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="45"/>
        <source>Followed run stopped at step %1</source>
        <translation>Verfolgter Lauf gestoppt bei Schritt %1</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="46"/>
        <source>Followed run paused at step %1</source>
        <translation>Verfolgter Lauf pausiert bei Schritt %1</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="47"/>
        <source>Following a run another process trains</source>
        <translation>Verfolgt einen Lauf, den ein anderer Prozess trainiert</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="54"/>
        <source>Connecting…</source>
        <translation>Verbinde…</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="55"/>
        <source>Preparing the data and the model, evaluating the starting model…</source>
        <translation>Daten und Modell werden vorbereitet, das Ausgangsmodell wird evaluiert …</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="57"/>
        <source>Starting the first step…</source>
        <translation>Der erste Schritt beginnt …</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="57"/>
        <source>Training</source>
        <translation>Training</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="59"/>
        <source>Pausing: finishing the step and writing a checkpoint…</source>
        <translation>Pausiere: Schritt wird beendet und ein Checkpoint geschrieben …</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="61"/>
        <source>Paused at step %1</source>
        <translation>Pausiert bei Schritt %1</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="63"/>
        <source>Stopping: finishing the step and writing a checkpoint…</source>
        <translation>Stoppe: Schritt wird beendet und ein Checkpoint geschrieben …</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="65"/>
        <source>Stopped at step %1</source>
        <translation>Gestoppt bei Schritt %1</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="67"/>
        <source>Finished</source>
        <translation>Abgeschlossen</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="67"/>
        <source>Finished early, at step %1</source>
        <translation>Vorzeitig beendet, bei Schritt %1</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="69"/>
        <source>Not connected</source>
        <translation>Nicht verbunden</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="69"/>
        <source>Failed at step %1</source>
        <translation>Fehlgeschlagen bei Schritt %1</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="85"/>
        <source>step %1 / %2</source>
        <translation>Schritt %1 / %2</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="87"/>
        <source>%1 tok/s</source>
        <translation>%1 Token/s</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="92"/>
        <source> · %1 workers: %2</source>
        <translation> · %1 Worker: %2</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="98"/>
        <source>ETA %1</source>
        <translation>Restzeit %1</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="104"/>
        <source>next: %1</source>
        <translation>als Nächstes: %1</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="111"/>
        <source>connected to %1</source>
        <translation>verbunden mit %1</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="112"/>
        <source>%1 unreachable: reconnecting</source>
        <translation>%1 nicht erreichbar: verbinde neu</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="131"/>
        <source>Edit refused: %1</source>
        <translation>Bearbeitung abgelehnt: %1</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="135"/>
        <source>Analysis failed: %1</source>
        <translation>Analyse fehlgeschlagen: %1</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="141"/>
        <source>The run refused an edit shown as made: %1</source>
        <translation>Der Lauf hat eine schon angezeigte Änderung abgelehnt: %1</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="166"/>
        <source>Checkpoint of step %1 written (%2)</source>
        <translation>Checkpoint von Schritt %1 geschrieben (%2)</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="175"/>
        <source>A checkpoint could not be written; training goes on from memory: %1</source>
        <translation>Ein Checkpoint konnte nicht geschrieben werden; das Training läuft aus dem Speicher weiter: %1</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="178"/>
        <source>The disk is filling up: %1</source>
        <translation>Die Festplatte wird voll: %1</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="180"/>
        <source>Warning from the run: %1</source>
        <translation>Warnung vom Lauf: %1</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="190"/>
        <source>Ended at step %1 of %2: %3. </source>
        <translation>Beendet bei Schritt %1 von %2: %3. </translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="197"/>
        <source>The run at %1 finished: its model is in %2/final on the server</source>
        <translation>Der Lauf auf %1 ist fertig: sein Modell liegt auf dem Server in %2/final</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="199"/>
        <source>The run at %1 stopped at step %2 with a checkpoint; resume it on the server (normfree-cli resume)</source>
        <translation>Der Lauf auf %1 hat bei Schritt %2 mit einem Checkpoint angehalten; setzen Sie ihn auf dem Server fort (normfree-cli resume)</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="204"/>
        <source>The run at %1 is paused at step %2</source>
        <translation>Der Lauf auf %1 pausiert bei Schritt %2</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="207"/>
        <source>Finished: the trained model is in %1/final</source>
        <translation>Fertig: Das trainierte Modell liegt in %1/final</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="209"/>
        <source>Paused at step %1; checkpoint written. Resume goes on; edits to the schedule apply when it does.</source>
        <translation>Pausiert bei Schritt %1; Checkpoint geschrieben. „Fortsetzen“ macht weiter; Änderungen am Zeitplan gelten ab dann.</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="214"/>
        <source>Stopped at step %1 with a checkpoint: Resume continues it</source>
        <translation>Bei Schritt %1 mit Checkpoint angehalten: Fortsetzen setzt ihn fort</translation>
    </message>
    <message>
        <location filename="../widgets/window/RunStatusBar.cpp" line="216"/>
        <source>The followed run finished: its model is in %1/final</source>
        <translation>Der verfolgte Lauf ist beendet: sein Modell liegt in %1/final</translation>
    </message>
</context>
<context>
    <name>RunsView</name>
    <message>
        <location filename="../widgets/views/RunsView.cpp" line="172"/>
        <source>model: %1
trained on: %2
evaluated on: %3
tracked on: %4</source>
        <translation>Modell: %1
trainiert auf: %2
evaluiert auf: %3
verfolgt auf: %4</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunsView.cpp" line="174"/>
        <source>nothing</source>
        <translation>nichts</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunsView.cpp" line="175"/>
        <source>%1 (%2 tokens each)</source>
        <translation>%1 (je %2 Tokens)</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunsView.cpp" line="178"/>
        <source>%1 (%2 sequences of %3 tokens)</source>
        <translation>%1 (%2 Sequenzen zu %3 Tokens)</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunsView.cpp" line="62"/>
        <source>Folder of runs to compare</source>
        <translation>Ordner der zu vergleichenden Läufe</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunsView.cpp" line="174"/>
        <source>%1 of %2</source>
        <translation>%1 von %2</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunsView.cpp" line="127"/>
        <source>cannot be read: %1</source>
        <translation>nicht lesbar: %1</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunsView.cpp" line="137"/>
        <source>%1 (shown)</source>
        <translation>%1 (gezeigt)</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunsView.cpp" line="148"/>
        <source>overlay %1 on the training plots</source>
        <translation>%1 über die Trainingsdiagramme legen</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunsView.cpp" line="152"/>
        <source>No folder of runs: open a run, or choose a folder.</source>
        <translation>Kein Ordner mit Läufen: einen Lauf öffnen oder einen Ordner wählen.</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunsView.cpp" line="153"/>
        <source>Runs in %1 — ticked runs are overlaid on the training plots, each in its colour</source>
        <translation>Läufe in %1 — angehakte Läufe liegen über den Trainingsdiagrammen, jeder in seiner Farbe</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunsView.cpp" line="188"/>
        <source>training</source>
        <translation>trainiert</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunsView.cpp" line="189"/>
        <source>paused</source>
        <translation>pausiert</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunsView.cpp" line="190"/>
        <source>stopped</source>
        <translation>angehalten</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunsView.cpp" line="191"/>
        <source>finished</source>
        <translation>fertig</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunsView.cpp" line="233"/>
        <source>Choose folder…</source>
        <translation>Ordner wählen…</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunsView.cpp" line="234"/>
        <source>Refresh</source>
        <translation>Aktualisieren</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunsView.cpp" line="235"/>
        <source>read every run again from its folder</source>
        <translation>jeden Lauf neu aus seinem Ordner lesen</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunsView.cpp" line="236"/>
        <source>run</source>
        <translation>Lauf</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunsView.cpp" line="236"/>
        <source>mode</source>
        <translation>Modus</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunsView.cpp" line="236"/>
        <source>preset</source>
        <translation>Preset</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunsView.cpp" line="236"/>
        <source>steps</source>
        <translation>Schritte</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunsView.cpp" line="236"/>
        <source>learning rate</source>
        <translation>Lernrate</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunsView.cpp" line="237"/>
        <source>last CE</source>
        <translation>letzte CE</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunsView.cpp" line="237"/>
        <source>last evaluation</source>
        <translation>letzte Evaluierung</translation>
    </message>
    <message>
        <location filename="../widgets/views/RunsView.cpp" line="237"/>
        <source>status</source>
        <translation>Status</translation>
    </message>
</context>
<context>
    <name>TimelineWidget</name>
    <message>
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="33"/>
        <source>treatments</source>
        <translation>Behandlungen</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="55"/>
        <source>the end of %1&apos;s position-0 treatment</source>
        <translation>das Ende der Position-0-Behandlung von %1</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="57"/>
        <source>the end of %1&apos;s end-of-text treatment</source>
        <translation>das Ende der Textende-Behandlung von %1</translation>
    </message>
    <message numerus="yes">
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="71"/>
        <source> and %n more</source>
        <translation>
            <numerusform> und %n weiteres</numerusform>
            <numerusform> und %n weitere</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="80"/>
        <source>the position-0 treatment of %1 ends at step %2</source>
        <translation>die Position-0-Behandlung von %1 endet bei Schritt %2</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="82"/>
        <source>the end-of-text treatment of %1 ends at step %2</source>
        <translation>die Textende-Behandlung von %1 endet bei Schritt %2</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="88"/>
        <source>%1 becomes fake at step %2</source>
        <translation>%1 erhält bei Schritt %2 eine feste Skala (FakeLN)</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/TimelineEditCommand.cpp" line="57"/>
        <source>Undone: %1</source>
        <translation>Rückgängig gemacht: %1</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/TimelineEditCommand.cpp" line="58"/>
        <source>Redone: %1</source>
        <translation>Wiederhergestellt: %1</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="303"/>
        <source>No schedule: open a model and choose a removal preset.</source>
        <translation>Kein Zeitplan: Öffnen Sie ein Modell und wählen Sie ein Entfernungs-Preset.</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="306"/>
        <source>The schedule shown may be out of date: %1</source>
        <translation>Der angezeigte Zeitplan ist womöglich nicht aktuell: %1</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="331"/>
        <source>%1 was applied at step %2 and cannot move.</source>
        <translation>%1 wurde bei Schritt %2 angewendet und kann nicht verschoben werden.</translation>
    </message>
    <message numerus="yes">
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="357"/>
        <source> (+%n more)</source>
        <translation>
            <numerusform> (+%n weiteres)</numerusform>
            <numerusform> (+%n weitere)</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="359"/>
        <source>gap %1 → %2 steps</source>
        <translation>Abstand %1 → %2 Schritte</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="391"/>
        <source>Move %1 to step %2</source>
        <translation>%1 auf Schritt %2 verschieben</translation>
    </message>
    <message numerus="yes">
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="392"/>
        <source>Move %n events</source>
        <translation>
            <numerusform>%n Ereignis verschieben</numerusform>
            <numerusform>%n Ereignisse verschieben</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="395"/>
        <source>Moved %1 to step %2</source>
        <translation>%1 auf Schritt %2 verschoben</translation>
    </message>
    <message numerus="yes">
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="396"/>
        <source>Moved %n event(s): %1</source>
        <translation>
            <numerusform>%n Ereignis verschoben: %1</numerusform>
            <numerusform>%n Ereignisse verschoben: %1</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="412"/>
        <source>Add %1</source>
        <translation>%1 hinzufügen</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="416"/>
        <source>Added: %1</source>
        <translation>Hinzugefügt: %1</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="440"/>
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="533"/>
        <source>Applied already: an event that fired stays in the run</source>
        <translation>Schon angewandt: ein ausgelöstes Ereignis bleibt im Lauf</translation>
    </message>
    <message numerus="yes">
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="444"/>
        <source>Delete %n events</source>
        <translation>
            <numerusform>%n Ereignis löschen</numerusform>
            <numerusform>%n Ereignisse löschen</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="449"/>
        <source>Deleted %n event(s): %1</source>
        <translation>
            <numerusform>%n Ereignis gelöscht: %1</numerusform>
            <numerusform>%n Ereignisse gelöscht: %1</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="490"/>
        <source>End position-0 treatment at step %1</source>
        <translation>Position-0-Behandlung bei Schritt %1 beenden</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="491"/>
        <source>End end-of-text treatment at step %1</source>
        <translation>End-of-Text-Behandlung bei Schritt %1 beenden</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="494"/>
        <source>Make LN_f fake at step %1</source>
        <translation>LN_f bei Schritt %1 durch FakeLN ersetzen</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="500"/>
        <source>Make %1 fake at step %2</source>
        <translation>%1 bei Schritt %2 durch FakeLN ersetzen</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="570"/>
        <source> (tentative: the autopilot decides when)</source>
        <translation> (vorläufig: der Autopilot entscheidet den Zeitpunkt)</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="498"/>
        <source>layer %1</source>
        <translation>Schicht %1</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="109"/>
        <source>Removal timeline: drag events to move them (Ctrl-click selects several), Shift-drag the first event of a group to change its gap, double-click to add, Delete to remove, wheel to zoom, drag the background to pan (Zoom to fit, in the right-click menu, shows the pending events, or follows a run that has none, again). Applied events are locked.</source>
        <translation>Entfernungs-Zeitleiste: Ereignisse ziehen, um sie zu verschieben (Strg-Klick wählt mehrere), das erste Ereignis einer Gruppe mit Umschalt ziehen, um ihren Abstand zu ändern, Doppelklick zum Hinzufügen, Entf zum Entfernen, Mausrad zum Zoomen, den Hintergrund ziehen zum Verschieben („Einpassen“ im Rechtsklick-Menü zeigt wieder die ausstehenden Ereignisse oder folgt einem Lauf ohne solche). Angewandte Ereignisse sind gesperrt.</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="356"/>
        <source>%1 (was step %2)</source>
        <translation>%1 (war Schritt %2)</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="499"/>
        <source>all layers</source>
        <translation>alle Schichten</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="504"/>
        <source>Nothing to add here: %1</source>
        <translation>Hier lässt sich nichts hinzufügen: %1</translation>
    </message>
    <message numerus="yes">
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="531"/>
        <source>Delete %n event(s)</source>
        <translation>
            <numerusform>%n Ereignis löschen</numerusform>
            <numerusform>%n Ereignisse löschen</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="536"/>
        <source>Zoom to fit</source>
        <translation>Einpassen</translation>
    </message>
    <message>
        <location filename="../widgets/timeline/TimelineWidget.cpp" line="569"/>
        <source> (applied)</source>
        <translation> (angewendet)</translation>
    </message>
</context>
<context>
    <name>TokenText</name>
    <message>
        <location filename="../widgets/analysis/TokenViews.cpp" line="244"/>
        <source>&apos;%1&apos; (position %2): nothing predicts it</source>
        <translation>&apos;%1&apos; (Position %2): nichts sagt es vorher</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/TokenViews.cpp" line="245"/>
        <source>&apos;%1&apos; predicted at position %2 · %3 %4</source>
        <translation>&apos;%1&apos; vorhergesagt an Position %2 · %3 %4</translation>
    </message>
</context>
<context>
    <name>TokensPane</name>
    <message>
        <location filename="../widgets/analysis/TokensPane.cpp" line="83"/>
        <source>&apos;%1&apos; is not a head: write L1H2 or 1.2</source>
        <translation>&apos;%1&apos; ist kein Kopf: L1H2 oder 1.2 schreiben</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/TokensPane.cpp" line="110"/>
        <source>name one head whose DLA and DE colour the text</source>
        <translation>einen Kopf nennen, dessen DLA und DE den Text färben</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/TokensPane.cpp" line="142"/>
        <source>DLA</source>
        <translation>DLA</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/TokensPane.cpp" line="143"/>
        <source>DE</source>
        <translation>DE</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/TokensPane.cpp" line="144"/>
        <source>&lt;b&gt;%1&apos;s DLA&lt;/b&gt; (cached final scale) per predicted token</source>
        <translation>&lt;b&gt;DLA von %1&lt;/b&gt; (gespeicherte finale Skala) je vorhergesagtem Token</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/TokensPane.cpp" line="145"/>
        <source>&lt;b&gt;%1&apos;s direct effect&lt;/b&gt; (final norm recomputed)</source>
        <translation>&lt;b&gt;direkter Effekt von %1&lt;/b&gt; (finale Norm neu berechnet)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/TokensPane.cpp" line="154"/>
        <source>Tokens: attention patterns</source>
        <translation>Tokens: Attention-Muster</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/TokensPane.cpp" line="158"/>
        <source>Tokens: text by DLA</source>
        <translation>Tokens: Text nach DLA</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/TokensPane.cpp" line="160"/>
        <source>Tokens: text by direct effect</source>
        <translation>Tokens: Text nach direktem Effekt</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/TokensPane.cpp" line="165"/>
        <source>One validation sequence whole, as CircuitsVis draws a prompt: the attention patterns of the heads named over the full context (hover a cell for its weight; click to lock a query row in every head), and the text coloured by one head&apos;s direct logit attribution and, beside it, its direct effect on one diverging scale.</source>
        <translation>Eine Validierungssequenz ganz, wie CircuitsVis einen Prompt zeigt: die Attention-Muster der genannten Köpfe über den ganzen Kontext (Zelle überfahren für ihr Gewicht; anklicken hält eine Query-Zeile in jedem Kopf fest) und der Text, gefärbt nach der direkten Logit-Attribution eines Kopfes und daneben nach seinem direkten Effekt, auf einer divergierenden Skala.</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/TokensPane.cpp" line="174"/>
        <source>the validation sequence shown</source>
        <translation>die gezeigte Validierungssequenz</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/TokensPane.cpp" line="175"/>
        <source>heads whose attention patterns are drawn, e.g. L1H2, L2H3 (at most 16)</source>
        <translation>Köpfe, deren Attention-Muster gezeichnet werden, z. B. L1H2, L2H3 (höchstens 16)</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/TokensPane.cpp" line="176"/>
        <source>the head whose DLA and direct effect colour the text</source>
        <translation>der Kopf, dessen DLA und direkter Effekt den Text färben</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/TokensPane.cpp" line="177"/>
        <source>Export patterns…</source>
        <translation>Muster exportieren…</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/TokensPane.cpp" line="178"/>
        <source>Export DLA text…</source>
        <translation>DLA-Text exportieren…</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/TokensPane.cpp" line="179"/>
        <source>SVG (one vector rectangle per cell), PNG or CSV</source>
        <translation>SVG (ein Vektorrechteck je Zelle), PNG oder CSV</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/TokensPane.cpp" line="180"/>
        <source>SVG, PNG or CSV of the text coloured by DLA</source>
        <translation>SVG, PNG oder CSV des nach DLA gefärbten Texts</translation>
    </message>
    <message>
        <location filename="../widgets/analysis/TokensPane.h" line="25"/>
        <source>Tokens</source>
        <translation>Tokens</translation>
    </message>
</context>
<context>
    <name>TrackedAnalysisText</name>
    <message>
        <location filename="../widgets/views/TrackedAnalysisText.cpp" line="4"/>
        <source>NMAE of DLA (%)</source>
        <translation>NMAE der DLA (%)</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrackedAnalysisText.cpp" line="5"/>
        <source>attention sink rate</source>
        <translation>Anteil der Attention-Sinks</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrackedAnalysisText.cpp" line="6"/>
        <source>position-0 residual norm ratio</source>
        <translation>Residuumsnorm Position 0 / Rest</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrackedAnalysisText.cpp" line="7"/>
        <source>IOI logit difference (nats)</source>
        <translation>IOI-Logit-Differenz (nats)</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrackedAnalysisText.cpp" line="8"/>
        <source>attribution patching error (%)</source>
        <translation>Fehler des Attribution Patching (%)</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrackedAnalysisText.cpp" line="9"/>
        <source>confidence-neuron effect on entropy (nats)</source>
        <translation>Wirkung der Konfidenzneuronen auf die Entropie (nats)</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrackedAnalysisText.cpp" line="10"/>
        <source>cross-entropy on the tracking data (nats)</source>
        <translation>Kreuzentropie auf den Verfolgungsdaten (nats)</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrackedAnalysisText.cpp" line="16"/>
        <source>final residual</source>
        <translation>finales Residuum</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrackedAnalysisText.cpp" line="17"/>
        <source>layer %1</source>
        <translation>Schicht %1</translation>
    </message>
</context>
<context>
    <name>TrackedPlot</name>
    <message>
        <location filename="../widgets/views/TrackedPlot.cpp" line="108"/>
        <source>%1 (other data: %2)</source>
        <translation>%1 (andere Daten: %2)</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrackedPlot.cpp" line="108"/>
        <source>Tracked analyses</source>
        <translation>Verfolgte Analysen</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrackedPlot.cpp" line="113"/>
        <source>%1 s each</source>
        <translation>je %1 s</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrackedPlot.cpp" line="114"/>
        <source>one measurement took %1 s on average; %2 measured</source>
        <translation>eine Messung dauerte im Mittel %1 s; %2 gemessen</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrackedPlot.cpp" line="108"/>
        <source>Tracked: %1</source>
        <translation>Verfolgt: %1</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrackedPlot.cpp" line="119"/>
        <source>overall</source>
        <translation>gesamt</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrackedPlot.cpp" line="119"/>
        <source>overall (run shown)</source>
        <translation>gesamt (gezeigter Lauf)</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrackedPlot.cpp" line="123"/>
        <source>at a removal</source>
        <translation>bei einer Entfernung</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrackedPlot.cpp" line="146"/>
        <source>per layer (darker: deeper)</source>
        <translation>je Schicht (dunkler: tiefer)</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrackedPlot.cpp" line="163"/>
        <source>optimizer step</source>
        <translation>Optimierer-Schritt</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrackedPlot.cpp" line="165"/>
        <source>the analysis plotted: the run measures each on its model every few steps and at each removal event (normfree-cli … --track)</source>
        <translation>die gezeichnete Analyse: der Lauf misst jede an seinem Modell alle paar Schritte und bei jedem Entfernungsereignis (normfree-cli … --track)</translation>
    </message>
</context>
<context>
    <name>TrainingView</name>
    <message>
        <location filename="../widgets/views/TrainingView.cpp" line="273"/>
        <source>eval %1</source>
        <translation>Evaluierung %1</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrainingView.cpp" line="442"/>
        <source>No run yet.
Start trains the setup on the left;
File › Open Run follows a run.</source>
        <translation>Noch kein Lauf.
„Starten“ trainiert die Konfiguration links;
Datei › Lauf öffnen verfolgt einen Lauf.</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrainingView.cpp" line="447"/>
        <source>Training loss</source>
        <translation>Trainingsverlust</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrainingView.cpp" line="448"/>
        <source>Learning rate and gradient norm</source>
        <translation>Lernrate und Gradientennorm</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrainingView.cpp" line="451"/>
        <location filename="../widgets/views/TrainingView.cpp" line="459"/>
        <location filename="../widgets/views/TrainingView.cpp" line="464"/>
        <source>optimizer step</source>
        <translation>Optimierer-Schritt</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrainingView.cpp" line="452"/>
        <source>loss (nats)</source>
        <translation>Verlust (Nats)</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrainingView.cpp" line="213"/>
        <location filename="../widgets/views/TrainingView.cpp" line="450"/>
        <source>frozen</source>
        <translation>eingefroren</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrainingView.cpp" line="306"/>
        <source>%1 (tracked)</source>
        <translation>%1 (verfolgt)</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrainingView.cpp" line="307"/>
        <source>%1 (frozen)</source>
        <translation>%1 (eingefroren)</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrainingView.cpp" line="357"/>
        <source>%1: cross-entropy</source>
        <translation>%1: Kreuzentropie</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrainingView.cpp" line="366"/>
        <source>%1: eval %2</source>
        <translation>%1: Evaluierung %2</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrainingView.cpp" line="381"/>
        <location filename="../widgets/views/TrainingView.cpp" line="468"/>
        <source>Smoothing %1</source>
        <translation>Glättung %1</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrainingView.cpp" line="449"/>
        <source>Norm scale per site</source>
        <translation>Normskala je Stelle</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrainingView.cpp" line="453"/>
        <source>cross-entropy (raw)</source>
        <translation>Kreuzentropie (roh)</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrainingView.cpp" line="454"/>
        <source>auxiliary loss (raw)</source>
        <translation>Hilfsverlust (roh)</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrainingView.cpp" line="455"/>
        <source>total (raw)</source>
        <translation>gesamt (roh)</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrainingView.cpp" line="456"/>
        <source>cross-entropy</source>
        <translation>Kreuzentropie</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrainingView.cpp" line="457"/>
        <source>auxiliary loss</source>
        <translation>Hilfsverlust</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrainingView.cpp" line="458"/>
        <source>total</source>
        <translation>gesamt</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrainingView.cpp" line="460"/>
        <location filename="../widgets/views/TrainingView.cpp" line="462"/>
        <source>learning rate</source>
        <translation>Lernrate</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrainingView.cpp" line="461"/>
        <source>gradient norm</source>
        <translation>Gradientennorm</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrainingView.cpp" line="463"/>
        <source>gradient norm (before clipping)</source>
        <translation>Gradientennorm (vor dem Clipping)</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrainingView.cpp" line="465"/>
        <source>scale s</source>
        <translation>Skala s</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrainingView.cpp" line="184"/>
        <source>Learning rate</source>
        <translation>Lernrate</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrainingView.cpp" line="185"/>
        <source>Norm scales</source>
        <translation>Normskalen</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrainingView.cpp" line="186"/>
        <source>Tracked</source>
        <translation>Verfolgt</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrainingView.cpp" line="467"/>
        <source>Logarithmic loss axis</source>
        <translation>Logarithmische Verlustachse</translation>
    </message>
    <message>
        <location filename="../widgets/views/TrainingView.cpp" line="470"/>
        <source>how much the loss curves are smoothed (an exponential moving average, as TensorBoard&apos;s); the raw values stay as faint curves, hover shows them</source>
        <translation>wie stark die Verlustkurven geglättet werden (ein exponentiell gleitender Mittelwert, wie in TensorBoard); die Rohwerte bleiben als blasse Kurven, Überfahren zeigt sie</translation>
    </message>
</context>
<context>
    <name>WindowActions</name>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="104"/>
        <source>Continue the run from its newest checkpoint, trained in this process</source>
        <translation>Den Lauf vom neuesten Checkpoint fortsetzen, trainiert in diesem Prozess</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="107"/>
        <source>Tell the connected run to go on</source>
        <translation>Den verbundenen Lauf weiterlaufen lassen</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="110"/>
        <source>Continue the run shown from where it stopped</source>
        <translation>Den angezeigten Lauf dort fortsetzen, wo er anhielt</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="118"/>
        <source>Model: %1</source>
        <translation>Modell: %1</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="121"/>
        <source>Run: %1</source>
        <translation>Lauf: %1</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="134"/>
        <source>&amp;File</source>
        <translation>&amp;Datei</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="135"/>
        <source>&amp;Open Model Folder…</source>
        <translation>Modellordner ö&amp;ffnen…</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="136"/>
        <source>Open &amp;Run…</source>
        <translation>&amp;Lauf öffnen…</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="137"/>
        <source>&amp;Connect to Run…</source>
        <translation>Mit Lauf &amp;verbinden …</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="138"/>
        <source>Open &amp;Recent</source>
        <translation>&amp;Zuletzt geöffnet</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="139"/>
        <source>Open &amp;Bundled Model</source>
        <translation>&amp;Mitgeliefertes Modell öffnen</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="140"/>
        <source>Load &amp;Schedule…</source>
        <translation>Zeit&amp;plan laden…</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="141"/>
        <source>Choose &amp;Datasets…</source>
        <translation>&amp;Datensätze wählen…</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="142"/>
        <source>Folder for the &amp;Next Run…</source>
        <translation>Ordner für den &amp;nächsten Lauf…</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="143"/>
        <source>&amp;Export Figure</source>
        <translation>Abbildung &amp;exportieren</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="144"/>
        <source>Export &amp;All Figures…</source>
        <translation>&amp;Alle Abbildungen exportieren…</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="145"/>
        <source>&amp;Quit</source>
        <translation>&amp;Beenden</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="146"/>
        <source>&amp;Edit</source>
        <translation>&amp;Bearbeiten</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="147"/>
        <source>&amp;Undo</source>
        <translation>&amp;Rückgängig</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="148"/>
        <source>&amp;Redo</source>
        <translation>&amp;Wiederherstellen</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="149"/>
        <source>&amp;Delete Selected Events</source>
        <translation>Ausgewählte Ereignisse &amp;löschen</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="150"/>
        <source>&amp;Settings…</source>
        <translation>&amp;Einstellungen…</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="151"/>
        <source>&amp;Run</source>
        <translation>&amp;Lauf</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="152"/>
        <source>Start</source>
        <translation>Starten</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="153"/>
        <source>Start a new run of the opened model with the setup on the left</source>
        <translation>Einen neuen Lauf des geöffneten Modells mit der Einrichtung links starten</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="154"/>
        <source>Pause</source>
        <translation>Pausieren</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="155"/>
        <source>Finish the step in progress, write a checkpoint and wait</source>
        <translation>Den laufenden Schritt abschließen, einen Checkpoint schreiben und warten</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="156"/>
        <source>Stop</source>
        <translation>Stoppen</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="157"/>
        <source>Stop the run after the step in progress (a checkpoint is written)</source>
        <translation>Den Lauf nach dem laufenden Schritt stoppen (ein Checkpoint wird geschrieben)</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="158"/>
        <source>Resume</source>
        <translation>Fortsetzen</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="159"/>
        <source>&amp;Autopilot</source>
        <translation>&amp;Autopilot</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="160"/>
        <source>Time the pending removals of the run shown by its recovery from the last one</source>
        <translation>Die ausstehenden Entfernungen des angezeigten Laufs nach seiner Erholung von der letzten takten</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="161"/>
        <source>Refresh analyses</source>
        <translation>Analysen aktualisieren</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="162"/>
        <source>Compute every analysis pane on the model as it is now</source>
        <translation>Alle Analysebereiche für den aktuellen Zustand des Modells berechnen</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="163"/>
        <source>&amp;View</source>
        <translation>&amp;Ansicht</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="164"/>
        <source>Zoom Timeline to &amp;Fit</source>
        <translation>Zeitleiste &amp;einpassen</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="165"/>
        <source>&amp;Help</source>
        <translation>&amp;Hilfe</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="166"/>
        <source>The &amp;First Ten Minutes</source>
        <translation>Die &amp;ersten zehn Minuten</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="167"/>
        <source>&amp;About</source>
        <translation>Ü&amp;ber</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowActions.cpp" line="168"/>
        <source>Run</source>
        <translation>Lauf</translation>
    </message>
</context>
<context>
    <name>WindowDialogs</name>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="35"/>
        <source>Connect to Run</source>
        <translation>Mit Lauf verbinden</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="38"/>
        <source>A run started with &lt;tt&gt;normfree-cli … --serve PORT&lt;/tt&gt; on a server. From another machine, open an SSH tunnel first: &lt;tt&gt;ssh -N -L PORT:127.0.0.1:PORT server&lt;/tt&gt;. Address and token are in the run&apos;s serve.json.</source>
        <translation>Ein Lauf, der auf einem Server mit &lt;tt&gt;normfree-cli … --serve PORT&lt;/tt&gt; gestartet wurde. Von einem anderen Rechner aus öffnen Sie zuerst einen SSH-Tunnel: &lt;tt&gt;ssh -N -L PORT:127.0.0.1:PORT server&lt;/tt&gt;. Adresse und Token stehen in der serve.json des Laufs.</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="48"/>
        <source>Read serve.json…</source>
        <translation>serve.json lesen …</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="50"/>
        <source>A Run&apos;s serve.json</source>
        <translation>serve.json eines Laufs</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="51"/>
        <source>serve.json (serve.json);;All files (*)</source>
        <translation>serve.json (serve.json);;Alle Dateien (*)</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="58"/>
        <source>Cannot read serve.json</source>
        <translation>serve.json nicht lesbar</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="59"/>
        <source>The file is not a run&apos;s serve.json.</source>
        <translation>Die Datei ist keine serve.json eines Laufs.</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="62"/>
        <source>Address (host:port)</source>
        <translation>Adresse (Host:Port)</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="63"/>
        <source>Token</source>
        <translation>Token</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="66"/>
        <source>Connect</source>
        <translation>Verbinden</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="73"/>
        <source>Cannot connect</source>
        <translation>Keine Verbindung</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="74"/>
        <source>Give the address as host:port and the run&apos;s token.</source>
        <translation>Geben Sie die Adresse als Host:Port und das Token des Laufs an.</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="81"/>
        <source>Choose Datasets</source>
        <translation>Datensätze wählen</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="84"/>
        <source>Training tokens</source>
        <translation>Trainingstoken</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="84"/>
        <source>Validation tokens</source>
        <translation>Validierungstoken</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="84"/>
        <source>Second eval set (optional)</source>
        <translation>Zweiter Evaluierungsdatensatz (optional)</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="88"/>
        <source>Browse…</source>
        <translation>Durchsuchen…</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="91"/>
        <source>Token File</source>
        <translation>Token-Datei</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="91"/>
        <source>Token files (*.bin)</source>
        <translation>Token-Dateien (*.bin)</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="99"/>
        <source>Token files as `normfree-cli tokenize` writes them. Leave all empty to use the synthetic corpus made for the model.</source>
        <translation>Token-Dateien, wie `normfree-cli tokenize` sie schreibt. Alle Felder leer lassen, um den für das Modell erzeugten synthetischen Korpus zu verwenden.</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="108"/>
        <source>Settings</source>
        <translation>Einstellungen</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="116"/>
        <source>never (refresh by hand)</source>
        <translation>nie (manuell aktualisieren)</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="118"/>
        <source>Language</source>
        <translation>Sprache</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="119"/>
        <source>Refresh visible analyses every N steps</source>
        <translation>Sichtbare Analysen alle N Schritte aktualisieren</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="120"/>
        <source>Analyses share the processor with training: while one computes, training slows down (on a CPU, to about a third).</source>
        <translation>Analysen teilen sich den Prozessor mit dem Training: solange eine rechnet, wird das Training langsamer (auf einer CPU etwa auf ein Drittel).</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="131"/>
        <source>The First Ten Minutes</source>
        <translation>Die ersten zehn Minuten</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="133"/>
        <source>&lt;ol&gt;&lt;li&gt;The bundled tiny GPT-2 is open, with the &lt;b&gt;tiny&lt;/b&gt; removal preset on the timeline (bottom).&lt;/li&gt;&lt;li&gt;Press &lt;b&gt;Start&lt;/b&gt;. The first start makes the fine-tuning data (a few seconds), then training runs; the loss plot fills and a dashed line marks each removal.&lt;/li&gt;&lt;li&gt;If the loss has not recovered when the next removal comes, &lt;b&gt;drag&lt;/b&gt; the next events to the right on the timeline (Ctrl-click selects several; Shift-drag the first of a group changes its gap). Ctrl+Z undoes.&lt;/li&gt;&lt;li&gt;Press &lt;b&gt;Refresh analyses&lt;/b&gt; (F5): the panes on the right show the model as it is now, and say when they have gone stale.&lt;/li&gt;&lt;li&gt;In &lt;b&gt;Heads&lt;/b&gt;, click a head to see its DLA and DE per token and its attention pattern. After the last removal DLA equals DE exactly.&lt;/li&gt;&lt;li&gt;Right-click any plot to export it as PNG, SVG, PDF or CSV; File › Export All Figures writes them all.&lt;/li&gt;&lt;/ol&gt;</source>
        <translation>&lt;ol&gt;&lt;li&gt;Das mitgelieferte kleine GPT-2 ist geöffnet, mit dem Entfernungs-Preset &lt;b&gt;tiny&lt;/b&gt; auf der Zeitleiste (unten).&lt;/li&gt;&lt;li&gt;Klicken Sie auf &lt;b&gt;Starten&lt;/b&gt;. Beim ersten Start werden die Fine-Tuning-Daten erzeugt (einige Sekunden), danach läuft das Training; der Verlust-Plot füllt sich, und eine gestrichelte Linie markiert jede Entfernung.&lt;/li&gt;&lt;li&gt;Hat sich der Verlust bis zur nächsten Entfernung nicht erholt, &lt;b&gt;ziehen&lt;/b&gt; Sie die nächsten Ereignisse auf der Zeitleiste nach rechts (Strg+Klick wählt mehrere aus; Umschalt+Ziehen des ersten Ereignisses einer Gruppe ändert deren Abstand). Strg+Z macht rückgängig.&lt;/li&gt;&lt;li&gt;Klicken Sie auf &lt;b&gt;Analysen aktualisieren&lt;/b&gt; (F5): Die Bereiche rechts zeigen das Modell im aktuellen Zustand und melden, wenn sie veraltet sind.&lt;/li&gt;&lt;li&gt;Klicken Sie unter &lt;b&gt;Heads&lt;/b&gt; auf einen Head, um seine DLA und DE je Token sowie sein Attention-Muster zu sehen. Nach der letzten Entfernung stimmt DLA exakt mit DE überein.&lt;/li&gt;&lt;li&gt;Klicken Sie mit der rechten Maustaste auf einen Plot, um ihn als PNG, SVG, PDF oder CSV zu exportieren; Datei › Alle Abbildungen exportieren schreibt sie alle.&lt;/li&gt;&lt;/ol&gt;</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="156"/>
        <source>About NormFree Workbench</source>
        <translation>Über NormFree Workbench</translation>
    </message>
    <message>
        <location filename="../widgets/window/WindowDialogs.cpp" line="157"/>
        <source>&lt;b&gt;NormFree Workbench %1&lt;/b&gt;&lt;br&gt;Removes LayerNorm from GPT-2, Pythia and LLaMA-family models by fine-tuning and shows the circuits of the result.</source>
        <translation>&lt;b&gt;NormFree Workbench %1&lt;/b&gt;&lt;br&gt;Entfernt LayerNorm durch Fine-Tuning aus GPT-2-, Pythia- und LLaMA-Modellen und zeigt die Circuits des Ergebnisses.</translation>
    </message>
</context>
</TS>
