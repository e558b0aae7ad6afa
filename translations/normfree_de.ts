<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de_DE">
<context>
    <name>MainWindow</name>
    <message>
        <location filename="../widgets/MainWindow.cpp" line="46"/>
        <location filename="../widgets/MainWindow.cpp" line="96"/>
        <source>%1 — NormFree Workbench</source>
        <translation>%1 — NormFree Workbench</translation>
    </message>
    <message>
        <location filename="../widgets/MainWindow.cpp" line="47"/>
        <source>Opened %1</source>
        <translation>%1 geöffnet</translation>
    </message>
    <message>
        <location filename="../widgets/MainWindow.cpp" line="51"/>
        <source>Cannot open model folder</source>
        <translation>Modellordner kann nicht geöffnet werden</translation>
    </message>
    <message>
        <location filename="../widgets/MainWindow.cpp" line="52"/>
        <source>The model folder could not be opened.</source>
        <translation>Der Modellordner konnte nicht geöffnet werden.</translation>
    </message>
    <message>
        <location filename="../widgets/MainWindow.cpp" line="62"/>
        <source>Open Model Folder</source>
        <translation>Modellordner öffnen</translation>
    </message>
    <message>
        <location filename="../widgets/MainWindow.cpp" line="95"/>
        <source>NormFree Workbench</source>
        <translation>NormFree Workbench</translation>
    </message>
    <message>
        <location filename="../widgets/MainWindow.cpp" line="97"/>
        <source>&amp;File</source>
        <translation>&amp;Datei</translation>
    </message>
    <message>
        <location filename="../widgets/MainWindow.cpp" line="98"/>
        <source>&amp;Open Model Folder…</source>
        <translation>Modellordner ö&amp;ffnen…</translation>
    </message>
    <message>
        <location filename="../widgets/MainWindow.cpp" line="99"/>
        <source>Open &amp;Recent</source>
        <translation>&amp;Zuletzt geöffnet</translation>
    </message>
    <message>
        <location filename="../widgets/MainWindow.cpp" line="100"/>
        <source>&amp;Quit</source>
        <translation>&amp;Beenden</translation>
    </message>
</context>
<context>
    <name>ModelInfoView</name>
    <message>
        <location filename="../widgets/ModelInfoView.cpp" line="21"/>
        <source>LayerNorm</source>
        <translation>LayerNorm</translation>
    </message>
    <message>
        <location filename="../widgets/ModelInfoView.cpp" line="22"/>
        <source>FakeLN</source>
        <translation>FakeLN</translation>
    </message>
    <message>
        <location filename="../widgets/ModelInfoView.cpp" line="23"/>
        <source>RMSNorm</source>
        <translation>RMSNorm</translation>
    </message>
    <message>
        <location filename="../widgets/ModelInfoView.cpp" line="24"/>
        <source>LN Scaling</source>
        <translation>LN-Skalierung</translation>
    </message>
    <message>
        <location filename="../widgets/ModelInfoView.cpp" line="25"/>
        <source>Identity</source>
        <translation>Identität</translation>
    </message>
    <message>
        <location filename="../widgets/ModelInfoView.cpp" line="71"/>
        <source>No model open</source>
        <translation>Kein Modell geöffnet</translation>
    </message>
    <message>
        <location filename="../widgets/ModelInfoView.cpp" line="72"/>
        <source>Open a model folder (Hugging Face GPT-2 layout: config.json and model.safetensors) with File › Open Model Folder…</source>
        <translation>Öffnen Sie einen Modellordner (Hugging-Face-GPT-2-Layout: config.json und model.safetensors) über Datei › Modellordner öffnen…</translation>
    </message>
    <message>
        <location filename="../widgets/ModelInfoView.cpp" line="81"/>
        <source>%1 layers · %2 heads · d_model %3 · context %4 · vocabulary %5 · %6 parameters · %7 MB in %8 file(s)</source>
        <translation>%1 Schichten · %2 Köpfe · d_model %3 · Kontext %4 · Vokabular %5 · %6 Parameter · %7 MB in %8 Datei(en)</translation>
    </message>
    <message>
        <location filename="../widgets/ModelInfoView.cpp" line="90"/>
        <source>LayerNorm-free: no site divides by a per-token statistic.</source>
        <translation>LayerNorm-frei: keine Stelle teilt durch eine Statistik pro Token.</translation>
    </message>
    <message>
        <location filename="../widgets/ModelInfoView.cpp" line="91"/>
        <source>Normalization per site (LN_qk and LN_v are ln_1 as seen by queries/keys and by values):</source>
        <translation>Normalisierung je Stelle (LN_qk und LN_v sind ln_1 aus Sicht von Queries/Keys bzw. Values):</translation>
    </message>
    <message>
        <location filename="../widgets/ModelInfoView.cpp" line="95"/>
        <source>LN_qk (ln_1 → q, k)</source>
        <translation>LN_qk (ln_1 → q, k)</translation>
    </message>
    <message>
        <location filename="../widgets/ModelInfoView.cpp" line="95"/>
        <source>LN_v (ln_1 → v)</source>
        <translation>LN_v (ln_1 → v)</translation>
    </message>
    <message>
        <location filename="../widgets/ModelInfoView.cpp" line="95"/>
        <source>LN_mlp (ln_2)</source>
        <translation>LN_mlp (ln_2)</translation>
    </message>
    <message>
        <location filename="../widgets/ModelInfoView.cpp" line="98"/>
        <source>block %1</source>
        <translation>Block %1</translation>
    </message>
    <message>
        <location filename="../widgets/ModelInfoView.cpp" line="99"/>
        <source>final (LN_f)</source>
        <translation>final (LN_f)</translation>
    </message>
    <message>
        <location filename="../widgets/ModelInfoView.cpp" line="108"/>
        <source> · s = %1</source>
        <translation> · s = %1</translation>
    </message>
    <message>
        <location filename="../widgets/ModelInfoView.cpp" line="109"/>
        <source> · pos 0: %1</source>
        <translation> · Pos. 0: %1</translation>
    </message>
    <message>
        <location filename="../widgets/ModelInfoView.cpp" line="110"/>
        <source> · EOT</source>
        <translation> · EOT</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <location filename="../app/gui/main.cpp" line="20"/>
        <source>Remove LayerNorm from GPT-2 and inspect the result.</source>
        <translation>LayerNorm aus GPT-2 entfernen und das Ergebnis untersuchen.</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="23"/>
        <source>Model folder to open (config.json + model.safetensors).</source>
        <translation>Zu öffnender Modellordner (config.json + model.safetensors).</translation>
    </message>
</context>
</TS>
