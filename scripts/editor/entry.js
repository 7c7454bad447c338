// The GLUE page's editor: CodeMirror 6 with the script languages jobwheel runs, and a
// side-by-side diff of two versions. scripts/build-editor.sh bundles it into assets/editor.js;
// the page works with the plain textarea when this file is missing or fails.
import { EditorView, basicSetup } from "codemirror";
import { EditorState } from "@codemirror/state";
import { keymap } from "@codemirror/view";
import { indentWithTab } from "@codemirror/commands";
import { StreamLanguage, indentUnit } from "@codemirror/language";
import { shell } from "@codemirror/legacy-modes/mode/shell";
import { powerShell } from "@codemirror/legacy-modes/mode/powershell";
import { groovy } from "@codemirror/legacy-modes/mode/groovy";
import { python } from "@codemirror/lang-python";
import { javascript } from "@codemirror/lang-javascript";
import { php } from "@codemirror/lang-php";
import { MergeView } from "@codemirror/merge";

function language(glueType) {
  switch (glueType) {
    case "GLUE_SHELL": return StreamLanguage.define(shell);
    case "GLUE_PYTHON":
    case "GLUE_PYTHON2": return python();
    case "GLUE_NODEJS": return javascript();
    case "GLUE_PHP": return php();
    case "GLUE_POWERSHELL": return StreamLanguage.define(powerShell);
    case "GLUE_GROOVY": return StreamLanguage.define(groovy);
    default: return [];
  }
}

function labelled(label) {
  return EditorView.contentAttributes.of({ "aria-label": label });
}

// CodeMirror writes its styles into a <style> element: the page's policy lets it apply only
// with the answer's nonce.
function nonced(nonce) {
  return nonce ? EditorView.cspNonce.of(nonce) : [];
}

// Puts an editor in place of `textarea`, which stays the form's field and follows every edit.
function create(textarea, glueType, label, nonce) {
  const view = new EditorView({
    parent: textarea.parentElement,
    state: EditorState.create({
      doc: textarea.value,
      extensions: [
        basicSetup,
        nonced(nonce),
        // Tab indents; Escape then Tab leaves the editor, as CodeMirror documents
        keymap.of([indentWithTab]),
        indentUnit.of("    "),
        language(glueType),
        labelled(label),
        EditorView.updateListener.of((u) => {
          if (u.docChanged) textarea.value = u.state.doc.toString();
        }),
      ],
    }),
  });
  textarea.hidden = true;
  return {
    view,
    get value() { return view.state.doc.toString(); },
    set value(text) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    },
    focus() { view.focus(); },
  };
}

// A read-only side-by-side diff of `left` (older) and `right` (newer) in `parent`.
function diff(parent, left, right, glueType, labels, nonce) {
  const side = (doc, label) => ({
    doc,
    extensions: [
      basicSetup,
      nonced(nonce),
      language(glueType),
      labelled(label),
      EditorState.readOnly.of(true),
      EditorView.editable.of(false),
      // still reachable by keyboard, to scroll and read
      EditorView.contentAttributes.of({ tabindex: "0" }),
    ],
  });
  return new MergeView({
    parent,
    a: side(left, labels[0]),
    b: side(right, labels[1]),
    collapseUnchanged: { margin: 3, minSize: 6 },
    gutter: true,
  });
}

// The text of the editor whose element is `dom` (for checks from outside, such as tests).
function textOf(dom) {
  const view = EditorView.findFromDOM(dom);
  return view ? view.state.doc.toString() : null;
}

window.JobwheelEditor = { create, diff, textOf };
