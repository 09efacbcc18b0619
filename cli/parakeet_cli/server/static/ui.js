// What the upload and the microphone share: the API key, the status line and the transcript.

export const transcript = document.getElementById("transcript");
export const downloads = document.getElementById("downloads"); // the last file's (upload.js)
const status = document.getElementById("status");
const keyInput = document.getElementById("api-key");

export function apiKey() {
  return keyInput.value.trim();
}

// The key as an HTTP header (uploads); a WebSocket carries it as a subprotocol instead (mic.js).
export function authHeaders() {
  const key = apiKey();
  return key ? { Authorization: `Bearer ${key}` } : {};
}

// A new transcript (a file's or the microphone's) replaces the last one, and its downloads.
export function clearTranscript() {
  transcript.replaceChildren();
  downloads.hidden = true;
}

export function showStatus(message, isError = false) {
  status.textContent = message;
  status.classList.toggle("error", isError);
}

// "1:02.35": seconds as minutes and seconds, for word and turn times.
export function clock(seconds) {
  const minutes = Math.floor(seconds / 60);
  return `${minutes}:${(seconds - minutes * 60).toFixed(2).padStart(5, "0")}`;
}
