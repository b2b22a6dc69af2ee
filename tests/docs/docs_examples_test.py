#!/usr/bin/env python3
"""Checks that the documentation cannot rot: every hosts.yaml and queue.yaml
example of README.md and docs/*.md is given to the built runner, and every
relative link of the project's Markdown leads to a file and heading that exist.

An example is a ```yaml block whose first line names its file:
`# hosts.yaml ...` or `# queue.yaml ...` (`# queue.yaml, for runner broadcast`
for a broadcast queue). A hosts.yaml is dry-run with a one-job queue; a
queue.yaml with the hosts.yaml example before it in the same page, else a
fleet of eight hosts of eight GPUs; where that hosts.yaml has only local
slots, the queue is also run for real. No example connects anywhere: a dry
run never does, and the ssh config it is given is an empty file.

Usage: docs_examples_test.py RUNNER SOURCE_DIR
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

FENCE = re.compile(r'^\s*(```+|~~~+)(.*)$')
LINK = re.compile(r'\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+"[^"]*")?\)')
DEFAULT_FLEET = '- hostname: [node01, node02, node03, node04, node05, node06, node07, node08]\n' \
                '  gpu: [0, 1, 2, 3, 4, 5, 6, 7]\n'
CONFIG_EXAMPLE = '# ~/.config/runner/config.yaml'
LOCAL_NAMES = {'localhost', '127.0.0.1', '::1'}


class Block:
    def __init__(self, page, line, language, text):
        self.page, self.line, self.language, self.text = page, line, language, text

    def where(self):
        return f'{self.page}:{self.line}'


def fenced_blocks(page, text):
    """The fenced blocks of a page, and its text outside them."""
    blocks, prose, fence, body, start, language = [], [], None, [], 0, ''
    for number, line in enumerate(text.split('\n'), 1):
        match = FENCE.match(line)
        if fence is None and match:
            fence, body, start, language = match.group(1), [], number, match.group(2).strip()
            prose.append('')
        elif fence is not None and line.strip().startswith(fence) and line.strip() == fence:
            blocks.append(Block(page, start, language, '\n'.join(body) + '\n'))
            fence = None
            prose.append('')
        elif fence is not None:
            body.append(line)
            prose.append('')
        else:
            prose.append(line)
    return blocks, prose


def github_anchors(text):
    """The anchors GitHub gives a page's headings (duplicates get -1, -2, ...)."""
    anchors, seen = set(), {}
    _, prose = fenced_blocks('', text)
    for line in prose:
        match = re.match(r'^#{1,6}\s+(.*?)\s*#*\s*$', line)
        if not match:
            continue
        heading = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', match.group(1))
        slug = re.sub(r'[^\w\- ]', '', heading.lower()).replace(' ', '-')
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f'{slug}-{count}')
    return anchors


def check_links(source, pages):
    failures = []
    anchors_of = {}
    for page in pages:
        text = open(os.path.join(source, page), encoding='utf-8').read()
        _, prose = fenced_blocks(page, text)
        for number, line in enumerate(prose, 1):
            line = re.sub(r'`[^`]*`', '', line)
            for match in LINK.finditer(line):
                target = match.group(1)
                if re.match(r'^[a-z][a-z0-9+.-]*:', target):
                    continue
                path, _, anchor = target.partition('#')
                resolved = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
                full = os.path.join(source, resolved)
                if not os.path.exists(full):
                    failures.append(f'{page}:{number}: link to {target}: {resolved} does not exist')
                    continue
                if not anchor:
                    continue
                if not resolved.endswith('.md'):
                    failures.append(f'{page}:{number}: link to {target}: an anchor into a file that is not Markdown')
                    continue
                if resolved not in anchors_of:
                    anchors_of[resolved] = github_anchors(open(full, encoding='utf-8').read())
                if anchor not in anchors_of[resolved]:
                    failures.append(f'{page}:{number}: link to {target}: {resolved} has no heading #{anchor}')
    return failures


def run(runner, arguments, cwd):
    return subprocess.run([runner] + arguments, cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, NO_COLOR='1'))


def only_local(hosts_text):
    names = re.findall(r'^\s*-\s*(?:hostname:\s*)?(\[[^\]]*\]|\S+)', hosts_text, re.MULTILINE)
    flat = [n.strip() for name in names for n in name.strip('[]').split(',')]
    return bool(flat) and all(name in LOCAL_NAMES for name in flat)


def check_example(runner, block, hosts_text, work):
    """Runs one example; returns what went wrong, or None."""
    first = block.text.split('\n', 1)[0]
    directory = tempfile.mkdtemp(dir=work)
    ssh_config = os.path.join(directory, 'ssh_config')
    open(ssh_config, 'w').close()
    hosts, queue = os.path.join(directory, 'hosts.yaml'), os.path.join(directory, 'queue.yaml')
    if first.startswith('# hosts.yaml'):
        open(hosts, 'w').write(block.text)
        open(queue, 'w').write('- echo <<hostname>>\n')
        mode = 'queue'
    else:
        open(hosts, 'w').write(hosts_text or DEFAULT_FLEET)
        open(queue, 'w').write(block.text)
        mode = 'broadcast' if 'for runner broadcast' in first else 'queue'
    files = ['--hosts-file', hosts, '--queue-file', queue, '--ssh-config', ssh_config]
    dry = run(runner, [mode, '--dry-run'] + files, directory)
    if dry.returncode != 0:
        return f'runner {mode} --dry-run exits {dry.returncode}:\n{dry.stdout}{dry.stderr}'
    if first.startswith('# queue.yaml') and hosts_text and only_local(hosts_text):
        real = run(runner, [mode, '--no-status', '--no-gpu-monitor'] + files, directory)
        if real.returncode != 0:
            return f'runner {mode} exits {real.returncode}:\n{real.stdout}{real.stderr}'
    return None


def check_examples(runner, source, pages, work):
    failures, checked = [], 0
    for page in pages:
        blocks, _ = fenced_blocks(page, open(os.path.join(source, page), encoding='utf-8').read())
        hosts_text = None
        for block in blocks:
            if block.language != 'yaml':
                continue
            first = block.text.split('\n', 1)[0]
            if first.startswith(CONFIG_EXAMPLE):
                continue
            if not (first.startswith('# hosts.yaml') or first.startswith('# queue.yaml')):
                failures.append(f'{block.where()}: a yaml example begins with a comment naming its file '
                                f'(# hosts.yaml, # queue.yaml or {CONFIG_EXAMPLE}), not {first!r}')
                continue
            problem = check_example(runner, block, hosts_text, work)
            checked += 1
            print(f'{"FAILED" if problem else "ok"}: {block.where()}: {first}')
            if problem:
                failures.append(f'{block.where()}: {problem}')
            if first.startswith('# hosts.yaml'):
                hosts_text = block.text
    return failures, checked


def main():
    runner, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    example_pages = ['README.md'] + sorted(os.path.relpath(p, source) for p in glob.glob(f'{source}/docs/*.md'))
    linking_pages = example_pages + sorted(
        os.path.relpath(p, source) for pattern in ('*.md', 'bench/*.md', 'examples/*/README.md')
        for p in glob.glob(f'{source}/{pattern}'))
    linking_pages = list(dict.fromkeys(linking_pages))
    with tempfile.TemporaryDirectory() as work:
        failures, checked = check_examples(runner, source, example_pages, work)
    failures += check_links(source, linking_pages)
    print(f'{checked} examples run, links of {len(linking_pages)} pages checked')
    for failure in failures:
        print(f'FAILED: {failure}')
    if checked == 0:
        print('FAILED: no example found')
        return 1
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
