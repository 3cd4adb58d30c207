// Keep filter URLs short and shareable: htmx GETs drop empty fields (a plain form submit,
// without JavaScript, still works; its URL just lists the empty fields too).
document.addEventListener("htmx:configRequest", function (event) {
  if (event.detail.verb !== "get") {
    return;
  }
  var data = event.detail.formData;
  if (!data) {
    return;
  }
  Array.from(data.keys()).forEach(function (name) {
    if (data.getAll(name).every(function (value) { return value === ""; })) {
      data.delete(name);
    }
  });
});
