// A tiny syntax highlighter for code blocks: comments, strings, numbers and keywords of the
// languages agents write most. Returns tokens; the view wraps them in spans.

export interface Token {
  text: string;
  cls?: "kw" | "str" | "com" | "num" | "lit";
}

const KEYWORDS: Record<string, string> = {
  c: "if else for while do return break continue switch case default struct enum union typedef const static void sizeof goto extern",
  js: "const let var function return if else for while do switch case default break continue new class extends import export from as async await yield try catch finally throw typeof instanceof in of this super delete void interface type enum implements readonly public private protected namespace declare keyof",
  py: "def class return if elif else for while in not and or is import from as with try except finally raise lambda yield async await pass break continue global nonlocal del assert match case",
  sh: "if then else elif fi for in do done while until case esac function return export local set unset echo exit cd source",
  go: "func package import return if else for range switch case default break continue go defer chan map struct interface type var const select fallthrough goto",
  rust: "fn let mut pub struct enum impl trait use mod crate self super return if else match for while loop in break continue as ref move async await dyn where type const static unsafe extern",
  java: "class interface enum extends implements public private protected static final abstract void return if else for while do switch case default break continue new try catch finally throw throws import package this super var record sealed permits",
};
const LITERALS = new Set("true false null undefined None True False nil NaN".split(" "));

const ALIASES: Record<string, string> = {
  javascript: "js", jsx: "js", ts: "js", typescript: "js", tsx: "js", mjs: "js", cjs: "js", json: "js",
  python: "py", py3: "py", bash: "sh", shell: "sh", zsh: "sh", console: "sh", golang: "go", rs: "rust",
  kotlin: "java", kt: "java", scala: "java", cs: "java", csharp: "java", cpp: "c", "c++": "c", h: "c", hpp: "c",
};

function family(lang: string): string | undefined {
  const l = lang.toLowerCase();
  if (KEYWORDS[l]) return l;
  return ALIASES[l];
}

function lineComment(fam: string): RegExp {
  return fam === "py" || fam === "sh" ? /^#.*/ : /^\/\/.*/;
}

export function highlight(code: string, lang: string): Token[] {
  const fam = family(lang);
  if (!fam) return [{ text: code }];
  const keywords = new Set(KEYWORDS[fam].split(" "));
  const comment = lineComment(fam);
  const tokens: Token[] = [];
  let plain = "";
  const push = (text: string, cls?: Token["cls"]) => {
    if (cls) {
      if (plain) tokens.push({ text: plain });
      plain = "";
      tokens.push({ text, cls });
    } else plain += text;
  };
  let i = 0;
  while (i < code.length) {
    const rest = code.slice(i);
    let m: RegExpExecArray | null;
    if ((m = comment.exec(rest)) || (fam !== "py" && fam !== "sh" && (m = /^\/\*[\s\S]*?(\*\/|$)/.exec(rest)))) {
      push(m[0], "com");
    } else if ((m = /^("""[\s\S]*?("""|$)|'''[\s\S]*?('''|$))/.exec(rest)) && fam === "py") {
      push(m[0], "str");
    } else if ((m = /^("(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?|`(?:[^`\\]|\\.)*`?)/.exec(rest))) {
      push(m[0], "str");
    } else if ((m = /^\b(0x[\da-fA-F_]+|\d[\d_]*(\.\d+)?([eE][+-]?\d+)?)\b/.exec(rest))) {
      push(m[0], "num");
    } else if ((m = /^[A-Za-z_$][\w$]*/.exec(rest))) {
      const word = m[0];
      push(word, keywords.has(word) ? "kw" : LITERALS.has(word) ? "lit" : undefined);
    } else {
      m = /^[\s\S]/.exec(rest)!;
      push(m[0]);
    }
    i += m[0].length;
  }
  if (plain) tokens.push({ text: plain });
  return tokens;
}
