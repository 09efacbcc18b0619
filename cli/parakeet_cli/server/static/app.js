// The page's wiring: a chosen file is transcribed at once, #mic starts and stops live
// transcription, the download buttons save the last file's transcript.

import { toggleMicrophone } from "./mic.js";
import { download, transcribeFile } from "./upload.js";

const fileInput = document.getElementById("file");
fileInput.addEventListener("change", () => {
  if (fileInput.files.length === 0) return;
  transcribeFile(fileInput.files[0]);
  fileInput.value = ""; // so that choosing the same file again (say, with a key now) sends it again
});
document.getElementById("mic").addEventListener("click", toggleMicrophone);
for (const button of document.querySelectorAll("#downloads button")) {
  button.addEventListener("click", () => download(button.dataset.format));
}
