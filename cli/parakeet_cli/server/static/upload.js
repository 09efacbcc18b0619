// A chosen file is uploaded to /v1/audio/transcriptions as verbose_json with word times (on a
// server with a diarization model its words carry speakers too) and shown word by word.

import { authHeaders, clearTranscript, clock, downloads, showStatus, transcript } from "./ui.js";

const TRANSCRIPTIONS = "/v1/audio/transcriptions";
let current = null; // {file, body}: the last transcribed file and its verbose_json answer

// The message of an OpenAI-style error body ({"error": {"message": ...}}), or the status line.
async function errorOf(response) {
  try {
    const body = await response.json();
    if (body && body.error && body.error.message) return `${response.status}: ${body.error.message}`;
  } catch (e) {
    // not JSON: fall through to the status line
  }
  return `${response.status} ${response.statusText}`;
}

// The server's answer, or null once the status line says why there is none.
async function post(file, fields) {
  const form = new FormData();
  form.append("file", file);
  for (const [name, value] of fields) form.append(name, value);
  try {
    const response = await fetch(TRANSCRIPTIONS, { method: "POST", headers: authHeaders(), body: form });
    if (response.ok) return response;
    showStatus(await errorOf(response), true);
  } catch (e) {
    showStatus(`The server could not be reached: ${e.message}`, true);
  }
  return null;
}

export async function transcribeFile(file) {
  current = null;
  clearTranscript();
  showStatus(`Transcribing ${file.name}…`);
  const started = performance.now();
  const response = await post(file, [["response_format", "verbose_json"],
    ["timestamp_granularities[]", "word"], ["timestamp_granularities[]", "segment"]]);
  if (response === null) return;
  const body = await response.json();
  current = { file, body };
  render(body);
  downloads.hidden = false;
  showStatus(`${file.name}: ${clock(body.duration)} of audio in ${((performance.now() - started) / 1000).toFixed(2)} s`);
}

// One paragraph per speaker's turn (a server with speakers) or per segment; each word shows its
// times on hover.
function render(body) {
  const words = body.words || [];
  if (words.length === 0) {
    transcript.textContent = body.text;
    return;
  }
  const speakers = words.some((w) => w.speaker !== undefined);
  const starts = (body.segments || []).map((s) => s.start);
  let paragraph = null;
  let previous = null;
  let segment = 0;
  for (const word of words) {
    let fresh = paragraph === null;
    if (speakers) {
      fresh = fresh || word.speaker !== previous.speaker;
    } else {
      while (segment < starts.length && word.start >= starts[segment]) { segment++; fresh = true; }
    }
    if (fresh) {
      paragraph = transcript.appendChild(document.createElement("p"));
      if (speakers) {
        const label = paragraph.appendChild(document.createElement("span"));
        label.className = "speaker";
        label.dataset.speaker = word.speaker; // (its colour)
        label.textContent = `Speaker ${word.speaker}`;
      }
    } else {
      paragraph.append(" ");
    }
    const span = paragraph.appendChild(document.createElement("span"));
    span.className = "word";
    span.textContent = word.word;
    span.title = `${clock(word.start)} – ${clock(word.end)}`;
    previous = word;
  }
}

const EXTENSIONS = { srt: "srt", vtt: "vtt", verbose_json: "json" };

// SRT and VTT are the server's own cues: the file is transcribed again in that format; the JSON is
// the answer already shown.
export async function download(format) {
  if (current === null) return;
  let blob;
  if (format === "verbose_json") {
    blob = new Blob([JSON.stringify(current.body, null, 2)], { type: "application/json" });
  } else {
    showStatus(`Making the ${format.toUpperCase()} file…`);
    const response = await post(current.file, [["response_format", format]]);
    if (response === null) return;
    blob = await response.blob();
    showStatus("");
  }
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = `${current.file.name.replace(/\.[^.]*$/, "")}.${EXTENSIONS[format]}`;
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 60000);
}
