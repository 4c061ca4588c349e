// The "Copy" buttons of {auth_url}/account: progressive enhancement only. Without this file
// (or without a clipboard) the buttons stay hidden and the text stays selectable as it is.
"use strict";
const status = document.getElementById("copy-status");
for (const button of document.querySelectorAll("button[data-copy]")) {
  const source = document.getElementById(button.dataset.copy);
  if (source === null || !navigator.clipboard) continue;
  button.hidden = false;
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(source.textContent.trim());
      if (status) status.textContent = `Copied: ${button.dataset.what}.`;
    } catch {
      if (status) status.textContent = "Could not copy: select the text and copy it.";
    }
  });
}
