// A page opened from the file system cannot load its modules or models (the browser blocks them):
// it says so. A classic script, as such a page still runs those.
if (location.protocol === "file:") addEventListener("DOMContentLoaded", () => {
  document.getElementById("status").textContent = "This page must be served, not opened as a file";
  const error = document.getElementById("error");
  error.hidden = false;
  error.textContent = "Browsers do not let a page opened from the file system load its models. In this "
    + "folder run: python -m http.server 8000, then open http://localhost:8000/";
});
