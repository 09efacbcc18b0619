// Live transcription from the microphone over /v1/realtime?intent=transcription (OpenAI's GA
// events). The server's turn detection (server_vad where it has a VAD) cuts the speech into turns
// and commits each; without it, the turn ends when the microphone stops. Each turn is a paragraph
// of #transcript: its partial text as the deltas come, then its final text.

import { apiKey, clearTranscript, clock, showStatus, transcript } from "./ui.js";

// The rate the page declares in the session (OpenAI's pcm16 rate); the AudioContext resamples
// the microphone to it, and the worklet sends what the context gives.
const RATE = 24000;
// A browser cannot set headers on a WebSocket: the key goes as a subprotocol, as OpenAI's
// browser clients send it.
const KEY_PROTOCOL = "openai-insecure-api-key.";
const button = document.getElementById("mic");
let session = null; // the running Session, if any

export function toggleMicrophone() {
  if (!window.isSecureContext) {
    // browsers give pages the microphone (and audio worklets) in secure contexts only
    showStatus(`The microphone needs HTTPS or http://127.0.0.1 (or localhost); this page is ${location.origin}.`, true);
  } else if (session === null) {
    session = new Session();
  } else {
    session.stop();
  }
}

function setButton(on) {
  button.textContent = on ? "Stop the microphone" : "Start the microphone";
  button.setAttribute("aria-pressed", String(on));
  button.classList.toggle("on", on);
}

function base64(buffer) {
  const bytes = new Uint8Array(buffer);
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

class Session {
  constructor() {
    setButton(true);
    clearTranscript();
    showStatus("Connecting…");
    // made in the click's handler: a context made later may stay suspended (autoplay rules)
    this.context = new AudioContext({ sampleRate: RATE });
    this.pending = []; // audio recorded before the session took our settings
    this.ready = false;
    this.stopped = false; // the microphone was stopped
    this.finishing = false; // stopped: waiting for the last turn's text
    this.failed = false;
    this.lastItem = null; // the item committed after the stop
    const key = apiKey();
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    this.ws = new WebSocket(`${scheme}//${location.host}/v1/realtime?intent=transcription`,
      key ? ["realtime", KEY_PROTOCOL + key] : ["realtime"]);
    this.ws.onmessage = (message) => this.onEvent(JSON.parse(message.data));
    this.ws.onclose = (event) => this.onClose(event);
    this.ended = false; // the connection closed (what is still starting then fails: not news)
    this.record().catch((e) => {
      if (!this.ended && !this.stopped) this.fail(`The microphone is not available: ${e.message}`);
      this.stopRecording(); // (a microphone that opened meanwhile is closed again)
    });
  }

  async record() {
    this.stream = await navigator.mediaDevices.getUserMedia({
      audio: { channelCount: 1, echoCancellation: false, noiseSuppression: false, autoGainControl: false },
    });
    await this.context.audioWorklet.addModule("/static/pcm-worklet.js");
    if (this.stopped) {
      this.stopRecording(); // stopped while the microphone was being opened
      return;
    }
    const source = this.context.createMediaStreamSource(this.stream);
    const worklet = new AudioWorkletNode(this.context, "pcm16-block");
    worklet.port.onmessage = (message) => this.sendAudio(message.data);
    source.connect(worklet).connect(this.context.destination); // (it outputs silence)
  }

  send(event) {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(event));
  }

  sendAudio(buffer) {
    if (!this.ready) {
      this.pending.push(buffer);
      return;
    }
    this.send({ type: "input_audio_buffer.append", audio: base64(buffer) });
  }

  onEvent(event) {
    switch (event.type) {
      case "session.created":
        this.manual = event.session.audio.input.turn_detection === null;
        this.send({ type: "session.update", session: { type: "transcription",
          audio: { input: { format: { type: "audio/pcm", rate: RATE } } } } });
        break;
      case "session.updated":
        this.ready = true;
        this.pending.splice(0).forEach((buffer) => this.sendAudio(buffer));
        showStatus(this.manual ? "Listening; this server has no turn detection: the text is final when you stop."
          : "Listening.");
        break;
      case "input_audio_buffer.speech_started":
        this.turn(event.item_id).dataset.start = clock(event.audio_start_ms / 1000);
        break;
      case "input_audio_buffer.speech_stopped": {
        const turn = this.turn(event.item_id);
        turn.title = `${turn.dataset.start} – ${clock(event.audio_end_ms / 1000)}`;
        break;
      }
      case "input_audio_buffer.committed":
        if (this.finishing) this.lastItem = event.item_id;
        break;
      case "conversation.item.input_audio_transcription.delta":
        this.turn(event.item_id).append(event.delta);
        break;
      case "conversation.item.input_audio_transcription.completed":
        this.complete(event);
        break;
      case "error":
        // a stop with no speech since the last turn commits nothing: that error is expected
        if (this.finishing) {
          this.ws.close();
        } else {
          this.failed = true;
          showStatus(`The server: ${event.error.message}`, true);
        }
        break;
      default:
        break;
    }
  }

  turn(itemId) {
    let paragraph = document.getElementById(itemId);
    if (paragraph === null) {
      paragraph = transcript.appendChild(document.createElement("p"));
      paragraph.id = itemId;
      paragraph.className = "turn partial";
    }
    return paragraph;
  }

  complete(event) {
    const paragraph = this.turn(event.item_id);
    if (event.transcript.trim() === "") {
      paragraph.remove(); // a turn of noise
    } else {
      paragraph.textContent = event.transcript;
      paragraph.classList.replace("partial", "final");
    }
    if (this.finishing && event.item_id === this.lastItem) this.ws.close();
  }

  stopRecording() {
    this.stopped = true;
    if (this.stream) this.stream.getTracks().forEach((track) => track.stop());
    this.context.close().catch(() => {}); // (closing twice is no error worth showing)
  }

  stop() {
    this.stopRecording();
    this.finishing = true;
    if (this.ws.readyState !== WebSocket.OPEN) {
      this.ws.close(); // (still connecting: nothing was said yet)
      return;
    }
    showStatus("Finishing the last turn…");
    this.send({ type: "input_audio_buffer.commit" });
  }

  fail(message) {
    this.failed = true;
    showStatus(message, true);
    this.stopRecording();
    this.ws.close();
  }

  onClose(event) {
    this.ended = true;
    this.stopRecording();
    session = null;
    setButton(false);
    if (this.failed) return;
    if (this.finishing) {
      showStatus("Stopped.");
    } else {
      showStatus(`The connection to the server closed (code ${event.code}${event.reason ? `: ${event.reason}` : ""}); ` +
        "a server with --api-key refuses a missing or wrong key.", true);
    }
  }
}
