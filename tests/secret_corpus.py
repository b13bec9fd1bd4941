"""Posts for measuring the secret check: ones that carry a secret, and ordinary ones.

Everything is generated from a seed when it is needed. Each secret is a provider's prefix
followed by random characters in the provider's shape, so nothing here is a real credential,
and no whole token-shaped string is written in this file for a secret scanner to find.

``python3 -m tests.secret_corpus [--seed N]`` prints the share of secret-bearing posts caught,
the share of ordinary posts refused (naming them), and the worst and median time per post.
"""

import argparse
import base64
import json
import os
import random
import statistics
import string
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "scripts")]

from benchmarks_wiki.sensitive import find_sensitive  # noqa: E402

SEED = 20261130
LIMIT = 2048
ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
LOWER_DIGITS = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "+/"


def chars(rng, alphabet, n):
    return "".join(rng.choice(alphabet) for _ in range(n))


def b64(data):
    return base64.b64encode(data).decode()


def b64url(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def armor(label, body=""):
    dashes = "-" * 5
    return f"{dashes}BEGIN {label}{dashes}\n{body}{dashes}END {label}{dashes}"


def key_body(rng, lines=4):
    return "".join(chars(rng, B64, 64) + "\n" for _ in range(lines))


# -- things ordinary posts are made of ----------------------------------------------------------

BENCHMARKS = ["gsm8k", "MATH-500", "HumanEval", "MBPP", "MMLU", "MMLU-Pro", "GPQA Diamond",
              "ARC-Challenge", "HellaSwag", "SWE-bench Verified", "LiveCodeBench", "BBH", "DROP",
              "TruthfulQA", "IFEval", "AIME 2024", "WinoGrande", "BoolQ"]
DATASETS = ["openai/gsm8k", "cais/mmlu", "Idavidrein/gpqa", "princeton-nlp/SWE-bench_Verified",
            "openai/openai_humaneval", "google-research-datasets/mbpp", "allenai/ai2_arc",
            "Rowan/hellaswag", "livecodebench/code_generation_lite", "TIGER-Lab/MMLU-Pro",
            "HuggingFaceH4/MATH-500", "google/IFEval", "lukaemon/bbh", "truthfulqa/truthful_qa"]
OPEN_MODELS = ["meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Meta-Llama-3-70B-Instruct",
               "meta-llama/Llama-3.2-3B-Instruct", "Qwen/Qwen2.5-7B", "Qwen/Qwen2.5-7B-Instruct",
               "Qwen/Qwen2.5-Coder-32B-Instruct", "Qwen/QwQ-32B-Preview", "mistralai/Mistral-7B-Instruct-v0.3",
               "mistralai/Mixtral-8x7B-Instruct-v0.1", "google/gemma-2-9b-it", "google/gemma-2-27b-it",
               "microsoft/Phi-3-mini-4k-instruct", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B",
               "deepseek-ai/deepseek-coder-6.7b-instruct", "allenai/OLMo-2-1124-7B-Instruct",
               "HuggingFaceTB/SmolLM2-1.7B-Instruct", "01-ai/Yi-1.5-9B-Chat", "tiiuae/falcon-7b-instruct"]
INSPECT_MODELS = ["openai/gpt-4o-2024-08-06", "anthropic/claude-3-5-sonnet-20241022", "google/gemini-1.5-pro-002"]
API_MODELS = ["claude-3-5-sonnet-20241022", "claude-3-5-haiku-20241022", "claude-3-opus-20240229",
              "claude-sonnet-4-20250514", "claude-3-haiku-20240307", "gpt-4o-2024-08-06", "gpt-4o-mini",
              "gpt-4-turbo-2024-04-09", "o1-preview-2024-09-12", "o3-mini-2025-01-31", "gemini-1.5-pro-002",
              "gemini-2.0-flash-001", "deepseek-chat", "mistral-large-2411", "grok-2-1212"]
ORGS = ["EleutherAI", "openai", "princeton-nlp", "huggingface", "vllm-project", "bigcode-project",
        "UKGovernmentBEIS", "stanford-crfm", "allenai", "google-deepmind", "TIGER-AI-Lab"]
REPOS = ["lm-evaluation-harness", "human-eval", "SWE-bench", "vllm", "bigcode-evaluation-harness",
         "inspect_ai", "helm", "lighteval", "simple-evals", "MMLU-Pro", "open-instruct"]
REGISTRIES = ["ghcr.io/{org}/{repo}", "docker.io/vllm/vllm-openai", "nvcr.io/nvidia/pytorch",
              "swebench/sweb.eval.x86_64.{inst}", "us-docker.pkg.dev/deeplearning-platform-release/gcr.io/base-cu121",
              "python", "ghcr.io/astral-sh/uv"]
FIRST_NAMES = ["alice", "bob", "carol", "dmitri", "eve", "farah", "gustavo", "hiro", "ines", "jonas",
               "kemal", "lena", "mbali", "nora", "oskar", "priya", "quentin", "rosa", "sven", "tomoko"]
SWE_INSTANCES = ["django__django-11099", "astropy__astropy-12907", "sympy__sympy-20590",
                 "scikit-learn__scikit-learn-13142", "psf__requests-2317", "pytest-dev__pytest-5692",
                 "matplotlib__matplotlib-23314", "sphinx-doc__sphinx-8595", "pylint-dev__pylint-7080"]


def hexs(rng, n):
    return chars(rng, HEX, n)


def uuid(rng):
    h = hexs(rng, 32)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def pick(rng, items):
    return rng.choice(items)


def model(rng):
    return pick(rng, OPEN_MODELS + API_MODELS)


def arxiv_id(rng):
    return f"{rng.randint(18, 25)}{rng.randint(1, 12):02d}.{rng.randint(1, 29999):05d}"


def image(rng):
    name = pick(rng, REGISTRIES).format(org=pick(rng, ORGS).lower(), repo=pick(rng, REPOS).lower(),
                                        inst=pick(rng, SWE_INSTANCES).replace("__", "_1776_"))
    tag = pick(rng, ["latest", "v0.6.3", "v0.6.4.post1", "24.05-py3", "3.11-slim", f"sha-{hexs(rng, 7)}"])
    return f"{name}:{tag}@sha256:{hexs(rng, 64)}"


def score(rng):
    total = pick(rng, [164, 500, 1319, 198, 14042, 500, 1172, 30, 374])
    right = rng.randint(total // 3, total)
    return right, total, f"{100 * right / total:.1f}"


def command(rng):
    m = pick(rng, OPEN_MODELS)
    return pick(rng, [
        f"lm_eval --model vllm --model_args pretrained={m},tensor_parallel_size={rng.choice([1, 2, 4])},"
        f"dtype=bfloat16,gpu_memory_utilization=0.9 --tasks {pick(rng, ['gsm8k', 'mmlu', 'arc_challenge'])} "
        f"--num_fewshot {rng.choice([0, 5, 8])} --batch_size auto --seed {rng.randint(0, 9999)}",
        f"vllm serve {m} --max-model-len {rng.choice([4096, 8192, 32768])} --port 8000 --api-key EMPTY",
        f"python -m swebench.harness.run_evaluation --dataset_name princeton-nlp/SWE-bench_Verified "
        f"--predictions_path preds.jsonl --max_workers 8 --run_id run-{hexs(rng, 6)}",
        f"inspect eval inspect_evals/{pick(rng, ['gpqa_diamond', 'gsm8k', 'mmlu_0_shot', 'humaneval'])} "
        f"--model {pick(rng, INSPECT_MODELS)} --temperature {rng.choice([0, 0.2, 0.7, 1])}",
        f"python eval.py --model {m} --revision {hexs(rng, 40)} --max-new-tokens {rng.choice([256, 512, 1024])}",
        f"pip install vllm=={pick(rng, ['0.6.3', '0.6.3.post1', '0.7.2'])} torch==2.4.0+cu121 "
        f"transformers==4.46.{rng.randint(0, 3)}",
        f"git clone https://github.com/{pick(rng, ORGS)}/{pick(rng, REPOS)} && git checkout {hexs(rng, 12)}",
        f"docker run --gpus all --rm -e HF_TOKEN -v /data/hf:/models {image(rng)} python run.py",
        f"evalplus.evaluate --model {m} --dataset humaneval --backend vllm --greedy",
        f"python3 scripts/post.py --task {uuid(rng)} --body-file notes.md --dry-run",
    ])


def fields(rng):
    right, total, pct = score(rng)
    lines = [
        f"Setup: {pick(rng, OPEN_MODELS)}, temperature {rng.choice([0, 0.2, 0.6, 0.7, 1.0])}",
        f"Model: {model(rng)}",
        f"Task: {uuid(rng)}",
        f"Benchmark: {pick(rng, BENCHMARKS)}",
        f"Result: {right}/{total} correct ({pct}%)",
        f"Reproduce: {command(rng)}",
        f"Commit: {hexs(rng, 40)}",
        f"Dataset: {pick(rng, DATASETS)} (revision {hexs(rng, 7)})",
        f"Seed: {rng.randint(0, 2 ** 31)}",
        f"Image: {image(rng)}",
        f"Hardware: {rng.choice([1, 2, 4, 8])}x {pick(rng, ['A100 80GB', 'H100', 'L4', 'RTX 4090', 'A10G'])}",
        f"Cost: ${rng.randint(0, 40)}.{rng.randint(0, 99):02d}",
        f"Tokens: {rng.randint(1000, 900000):,} in / {rng.randint(1000, 90000):,} out",
        f"Wall time: {rng.randint(1, 59)}m {rng.randint(0, 59)}s",
        f"Answer extracted: {rng.randint(-50, 10000)}",
        "Grader: " + pick(rng, ["exact match, commas stripped", "pass@1 over 10 samples", "regex on the last number"]),
        "Key finding: " + pick(rng, ["the grader drops units", "few-shot order matters", "the gold label is wrong"]),
        f"Session: {rng.randint(1, 4)} of 4",
        "Auth: none, the dataset is public",
        f"Run: {pick(rng, ['run', 'eval', 'sweep'])}-{hexs(rng, 8)}",
        f"Problem id: {pick(rng, SWE_INSTANCES)}",
        f"Revision: {rng.randint(1, 9)}",
    ]
    rng.shuffle(lines)
    return "\n".join(lines[:rng.randint(3, 9)])


def config(rng):
    items = [
        ("model", pick(rng, OPEN_MODELS)), ("dataset", pick(rng, DATASETS)),
        ("revision", hexs(rng, 40)), ("split", pick(rng, ["test", "validation", "train"])),
        ("seed", rng.randint(0, 99999)), ("temperature", rng.choice([0.0, 0.2, 0.7, 1.0])),
        ("top_p", rng.choice([0.9, 0.95, 1.0])), ("max_tokens", rng.choice([256, 512, 2048, 4096])),
        ("max_new_tokens", rng.choice([128, 512, 1024])), ("tokenizer", pick(rng, OPEN_MODELS)),
        ("num_fewshot", rng.choice([0, 3, 5, 8])), ("batch_size", rng.choice([1, 8, 16, 64])),
        ("use_auth_token", rng.choice([True, False])), ("pad_token", "<|endoftext|>"),
        ("eos_token_id", rng.randint(2, 151645)), ("api_base", "http://localhost:8000/v1"),
        ("dtype", pick(rng, ["bfloat16", "float16", "auto"])), ("trust_remote_code", False),
        ("chat_template", pick(rng, ["chatml", "llama3", "default"])), ("n", rng.choice([1, 5, 10])),
        ("stop", ["</s>", "\n\nQuestion:"]), ("key", pick(rng, ["question", "problem", "prompt"])),
        ("answer_key", pick(rng, ["answer", "label", "target"])), ("max_tokens_per_call", 8192),
        ("private", False), ("sha256", hexs(rng, 64)), ("task_id", uuid(rng)),
        ("image", image(rng)), ("cache_dir", pick(rng, ["/data/hf", "/scratch/cache", "./cache"])),
    ]
    rng.shuffle(items)
    chosen = dict(items[:rng.randint(4, 12)])
    if rng.random() < 0.5:
        return "```json\n" + json.dumps(chosen, indent=rng.choice([None, 2])) + "\n```"
    lines = []
    for name, value in chosen.items():
        if isinstance(value, bool):
            value = str(value).lower()
        elif isinstance(value, list):
            value = json.dumps(value)
        elif isinstance(value, str) and (":" in value or "<" in value):
            value = json.dumps(value)
        lines.append(f"{name}: {value}")
    return "```yaml\n" + "\n".join(lines) + "\n```"


def code(rng):
    m = pick(rng, OPEN_MODELS)
    return "```python\n" + pick(rng, [
        f'tok = AutoTokenizer.from_pretrained("{m}", revision="{hexs(rng, 40)}")\n'
        f'ids = tok(prompt, return_tensors="pt").input_ids\nprint(len(ids[0]), tok.eos_token, tok.pad_token_id)',
        f'client = OpenAI(base_url="http://localhost:8000/v1", api_key="EMPTY")\n'
        f'out = client.chat.completions.create(model="{m}", messages=msgs, temperature=0, max_tokens=512)',
        f'client = anthropic.Anthropic(api_key=os.environ["ANTHROPIC_API_KEY"])\n'
        f'msg = client.messages.create(model="{pick(rng, API_MODELS)}", max_tokens=1024, messages=msgs)',
        f'ds = load_dataset("{pick(rng, DATASETS)}", split="test", revision="{hexs(rng, 40)}")\n'
        f'print(ds[{rng.randint(0, 999)}]["question"])',
        f'params = SamplingParams(temperature={rng.choice([0, 0.6, 0.8])}, top_p=0.95, '
        f'max_tokens={rng.choice([512, 2048])}, seed={rng.randint(0, 9999)})\nouts = llm.generate(prompts, params)',
        'def extract(text):\n    nums = re.findall(r"-?\\d[\\d,]*\\.?\\d*", text)\n'
        '    return nums[-1].replace(",", "") if nums else None',
        f'digest = hashlib.sha256(open("test.jsonl", "rb").read()).hexdigest()\nassert digest == "{hexs(rng, 64)}"',
        f'def has_close_elements(numbers, threshold):\n    numbers = sorted(numbers)\n'
        f'    return any(b - a < threshold for a, b in zip(numbers, numbers[1:]))\n'
        f'assert has_close_elements([1.0, 2.8, 3.0], {rng.choice([0.3, 0.05])})',
        'headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}\n'
        'r = requests.post(url, headers=headers, json=payload, timeout=30)',
        f'torch.manual_seed({rng.randint(0, 99999)})\nnp.random.seed({rng.randint(0, 99999)})',
        'tokenizer.pad_token = tokenizer.eos_token\nmax_tokens = 4096\nsession = requests.Session()',
    ]) + "\n```"


def environment(rng):
    pairs = [f"CUDA_VISIBLE_DEVICES={pick(rng, ['0', '0,1', '0,1,2,3', '1'])}", "HF_HOME=/data/hf",
             "HF_DATASETS_CACHE=/scratch/hf_cache", "TOKENIZERS_PARALLELISM=false", "PYTHONHASHSEED=0",
             f"OMP_NUM_THREADS={rng.choice([1, 4, 8, 16])}", "VLLM_ATTENTION_BACKEND=FLASH_ATTN",
             "HF_HUB_ENABLE_HF_TRANSFER=1", "WANDB_MODE=offline",
             f"WANDB_PROJECT={pick(rng, BENCHMARKS).lower().replace(' ', '-')}-evals",
             "TRANSFORMERS_OFFLINE=1", "NCCL_P2P_DISABLE=1", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
             "OPENAI_BASE_URL=http://localhost:8000/v1", "OPENAI_API_KEY=EMPTY", "HF_TOKEN=<your token>",
             "ANTHROPIC_API_KEY=$ANTHROPIC_API_KEY", "VLLM_WORKER_MULTIPROC_METHOD=spawn",
             "XDG_CACHE_HOME=/workspace/.cache", "TORCH_CUDA_ARCH_LIST=8.0;9.0"]
    rng.shuffle(pairs)
    chosen = pairs[:rng.randint(2, 6)]
    if rng.random() < 0.5:
        return "\n".join(f"export {pair}" for pair in chosen)
    return " ".join(chosen) + " " + command(rng)


def task_record(rng):
    """A problem as the portal serves it, pasted whole or in part."""
    task_id, split = uuid(rng), pick(rng, ["test", "train", "validation"])
    bench = pick(rng, ["gsm8k", "mmlu", "humaneval", "arc-challenge"])
    record = {"task_id": task_id, "benchmark": bench, "key": f"main--{split}--{task_id}", "split": split,
              "revision": rng.randint(1, 4), "answer": pick(rng, ["published", "none"]),
              "url": f"https://benchmarks.wiki/{bench}/main--{split}--{task_id}"}
    if rng.random() < 0.5:
        return json.dumps(record)
    return f"Key: main--{split}--{task_id}\nURL: {record['url']}\nRevision: {record['revision']}"


def links(rng):
    org, repo, sha = pick(rng, ORGS), pick(rng, REPOS), hexs(rng, 40)
    lines = [
        f"Paper: https://arxiv.org/abs/{arxiv_id(rng)}",
        f"PDF: https://arxiv.org/pdf/{arxiv_id(rng)}v{rng.randint(1, 4)}",
        f"Data: https://huggingface.co/datasets/{pick(rng, DATASETS)}",
        f"Model card: https://huggingface.co/{pick(rng, OPEN_MODELS)}",
        f"Code: https://github.com/{org}/{repo}/blob/{sha}/eval.py#L{rng.randint(1, 300)}-L{rng.randint(301, 600)}",
        f"Fix: https://github.com/{org}/{repo}/commit/{sha}",
        f"PR: https://github.com/{org}/{repo}/pull/{rng.randint(1, 9999)}",
        f"Review: https://openreview.net/forum?id={chars(rng, ALNUM, 10)}",
        f"File: https://huggingface.co/datasets/{pick(rng, DATASETS)}/resolve/main/test.parquet?download=true",
        "Notes: https://example.org/home/notes",
        "Leaderboard: https://paperswithcode.com/sota/"
        + pick(rng, ["math-word-problem-solving-on-gsm8k", "code-generation-on-humaneval"]),
        f"Docs: https://docs.vllm.ai/en/v0.6.{rng.randint(0, 6)}/serving/openai_compatible_server.html",
        f"Clone: git@github.com:{org}/{repo}.git",
    ]
    rng.shuffle(lines)
    return "\n".join(lines[:rng.randint(1, 5)])


def table(rng):
    rows = ["| model | score | n |", "| --- | --- | --- |"]
    for _ in range(rng.randint(2, 6)):
        right, total, pct = score(rng)
        rows.append(f"| {model(rng)} | {pct}% | {total} |")
    return "\n".join(rows)


def log(rng):
    stamp = f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"
    done = rng.randint(100, 1319)
    lines = [
        f"INFO {stamp}:11 llm_engine.py:{rng.randint(100, 400)}] Initializing an LLM engine (v0.6.3) with config: "
        f"model='{pick(rng, OPEN_MODELS)}', seed={rng.randint(0, 9)}",
        f"Processed prompts: 100%|##########| {done}/{done} [02:{rng.randint(10, 59)}<00:00, "
        f"{rng.uniform(2, 30):.2f}it/s]",
        f'  File "/opt/conda/lib/python3.10/site-packages/vllm/engine/llm_engine.py", line {rng.randint(100, 900)}, '
        f'in step',
        f'  File "/workspace/evals/run.py", line {rng.randint(10, 300)}, in <module>',
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
        f"[{stamp}] pass@1: {rng.random():.4f} (n={rng.randint(1, 20)})",
        f"{pick(rng, SWE_INSTANCES)}: RESOLVED_{pick(rng, ['FULL', 'NO'])}",
        f"Loading checkpoint shards: 100%|##########| 4/4 [00:0{rng.randint(1, 9)}<00:00]",
    ]
    rng.shuffle(lines)
    return "```text\n" + "\n".join(lines[:rng.randint(2, 6)]) + "\n```"


def git(rng):
    subjects = ["Fix answer parsing", "Bump vllm", "Use greedy decoding", "Add few-shot prompts"]
    lines = [f"{hexs(rng, 7)} {pick(rng, subjects)}" for _ in range(rng.randint(2, 5))]
    return pick(rng, [
        "```text\n$ git log --oneline\n" + "\n".join(lines) + "\n```",
        f"Fixed upstream in {hexs(rng, rng.choice([7, 10, 12, 40]))}; before it the grader read the first number.",
        f"```diff\n- max_tokens={rng.choice([256, 512])}\n+ max_tokens={rng.choice([1024, 2048])}\n```",
        f"sha256sum test.jsonl\n{hexs(rng, 64)}  test.jsonl\nmd5: {hexs(rng, 32)}",
    ])


def data(rng):
    record = json.dumps({"question": f"Natalia sold clips to {rng.randint(2, 90)} friends.",
                         "answer": str(rng.randint(1, 999))}).encode()
    return pick(rng, [
        f"The grader gets the record base64-encoded: {b64(record)}",
        f"Plot: data:image/png;base64,iVBORw0KGgo{chars(rng, B64, rng.randint(60, 200))}=",
        f"Colours in the chart: #{hexs(rng, 6)} for greedy, #{hexs(rng, 6)} for sampling.",
        f"Largest intermediate value: {rng.randint(10 ** 15, 10 ** 20)}; "
        f"product of all: {rng.randint(10 ** 25, 10 ** 30)}",
        f"Unix time of the run: {rng.randint(1700000000, 1800000000)}, trace id {hexs(rng, 32)}",
        f"Request id: req_{chars(rng, ALNUM, 24)}; message id msg_{chars(rng, ALNUM, 24)}",
        f"Random state after shuffling: {', '.join(str(rng.randint(0, 2 ** 32)) for _ in range(4))}",
    ])


def paths(rng):
    return pick(rng, [
        f"Outputs in /workspace/runs/{rng.randint(2024, 2025)}-{rng.randint(1, 12):02d}/preds.jsonl",
        "Cache: $HOME/.cache/huggingface (the default).",
        f"Windows run: D:\\data\\{pick(rng, BENCHMARKS).lower()}\\test.jsonl, C:\\tools\\python311\\python.exe",
        "Mounted the dataset at /mnt/data/gsm8k and wrote to ./runs/greedy/.",
        "Weights from /models/llama-3.1-8b, CUDA in /usr/local/cuda-12.1.",
        "Temp files went to /tmp/eval-cache; nothing else was written.",
    ])


def mentions(rng):
    return pick(rng, [
        "Set HF_TOKEN before running; the dataset is gated.",
        'api_key=os.environ["OPENAI_API_KEY"] in the harness, nothing hard-coded.',
        "curl -H \"Authorization: Bearer $OPENAI_API_KEY\" http://localhost:8000/v1/models",
        "In CI: token: ${{ secrets.HF_TOKEN }}",
        '"api_key": null, "password": "***"',
        "The tokenizer adds a BOS token; max_tokens: 1024 was enough.",
        "password: <set in the environment>",
        "OPENAI_API_KEY=sk-... (redacted) python run.py",
        f"Token count: {rng.randint(100, 99999)}, tokens/s: {rng.uniform(10, 5000):.1f}",
        "Passed --api-key EMPTY to vLLM as its docs say.",
        "echo $CR_PAT | docker login ghcr.io -u USERNAME --password-stdin",
        'redis-cli -a "$REDIS_PASSWORD" ping; mysql -u root -p results',
        "PGPASSWORD=$(cat /run/secrets/pg) psql -h db -U evals",
        "const apiKey = process.env.OPENAI_API_KEY;",
        'secret = hashlib.sha256(data).hexdigest()\ntoken = tokenizer.eos_token\napi_key = config["openai"]["key"]',
        "pass@1: 0.872, pass@10: 0.951; pass_at_k: 5; bypass_cache=True",
        "The Authorization header is not needed: the endpoint is public. Authorization: none",
        f"ssh -p 2222 gpu-box nvidia-smi; ping the authors at authors@example.org; "
        f"see https://medium.com/@{pick(rng, FIRST_NAMES)}/evals",
        f"secret_sauce: none; sort_key: {pick(rng, ['score', 'length'])}; primary_key: id",
    ])


def prose(rng):
    right, total, pct = score(rng)
    return pick(rng, [
        f"Greedy decoding, 1 attempt: {right}/{total} ({pct}%). "
        f"Self-consistency at k=5 added {rng.randint(1, 9)} points.",
        f"I could not reproduce the reported {rng.randint(60, 95)}.{rng.randint(0, 9)} on {pick(rng, BENCHMARKS)}; "
        f"my run of {model(rng)} got {pct}%.",
        f"The gold answer for this problem looks wrong: the question says {rng.randint(2, 40)} apples, "
        f"the answer assumes {rng.randint(41, 90)}.",
        f"Switching the prompt to the chat template moved {pick(rng, BENCHMARKS)} from {pct}% to "
        f"{min(100.0, float(pct) + rng.uniform(0.5, 9)):.1f}%.",
        "Note: the test split changed upstream, so older numbers are not comparable.",
        f"Question: does the {pick(rng, BENCHMARKS)} grader accept fractions like 3/4, or only decimals?",
    ])


def random_bytes(rng, n):
    return bytes(rng.randrange(256) for _ in range(n))


def wrapped(text, width):
    return "\n".join(text[i:i + width] for i in range(0, len(text), width))


def der_length(n):
    return bytes([0x82, n >> 8, n & 0xFF])


def certificate(rng):
    """A certificate's DER as it opens (a SEQUENCE of a SEQUENCE, version 3, a serial), then noise."""
    size = rng.randint(700, 1400)
    head = b"\x30" + der_length(size) + b"\x30" + der_length(size - 200) + bytes.fromhex("a003020102021400")
    return armor("CERTIFICATE", wrapped(b64(head + random_bytes(rng, rng.randint(200, 500))), 64) + "\n")


def public_key(rng):
    """An RSA public key's DER as it opens (the algorithm, then the BIT STRING), then noise."""
    head = bytes.fromhex("30820122300d06092a864886f70d01010105000382010f003082010a0282010100")
    return armor("PUBLIC KEY", wrapped(b64(head + random_bytes(rng, 230)), 64) + "\n")


def international(rng):
    """Prose in other languages and scripts: accents, no-break spaces, full-width punctuation,
    emoji joined by zero-width joiners, soft hyphens, right-to-left marks."""
    right, total, pct = score(rng)
    return pick(rng, [
        f"Résultat\u202f: {right}/{total} ({pct.replace('.', ',')}\u00a0%) sur {pick(rng, BENCHMARKS)}\u00a0; "
        f"le modèle «\u00a0{model(rng)}\u00a0» répond mieux en français.",
        f"Ergebnis: {pct} % richtig; die Bewertung übersieht Einheiten (z.\u00a0B. „km“ statt „m“).",
        f"Модель {model(rng)} решила {right} из {total} задач; ключевой вывод: оценщик отбрасывает единицы.",
        f"Το μοντέλο έλυσε {right}/{total} προβλήματα· α={rng.choice([0.1, 0.5])}, β=0.9, η=3e-4.",
        f"模型在{pick(rng, BENCHMARKS)}上的准确率为{pct}％（{total}题中{right}题正确）。注意：测试集已更新，旧分数不可比较。",
        f"結果：正解率は{pct}％でした。評価スクリプト（v{rng.randint(1, 3)}）は単位を無視します。",
        f"결과: {right}/{total} 정답 ({pct}%). 채점기가 단위를 무시합니다.",
        f"النتيجة\u200f: {right} من {total} ({pct}%)\u200f، والمقيّم يتجاهل الوحدات.",
        f"Bench\u00admark re\u00adsults by the team \U0001F469\u200d\U0001F4BB: {pct}% on "
        f"{pick(rng, BENCHMARKS)} \u2014 see the \ufb01gure\u00a0\u00bd below.",
        f"ＧＳＭ８Ｋ：{right}／{total}（{pct}％），ｓｅｅｄ＝{rng.randint(0, 99)}，ｍａｘ＿ｔｏｋｅｎｓ＝１０２４。",
    ])


def encoded_links(rng):
    """URLs with percent-escapes that decode to nothing secret."""
    words = pick(rng, ["gsm8k%20leaderboard", "math%2Dreasoning", "attention%20is%20all%20you%20need",
                       "%22chain%20of%20thought%22%20gsm8k", "llama%203.1%20%2B%20vllm"])
    return pick(rng, [
        f"Search: https://www.google.com/search?q={words}&hl=en",
        f"See https://en.wikipedia.org/wiki/Caf%C3%A9 and https://huggingface.co/datasets?search={words}",
        f"Login goes through https://auth.example.org/authorize?client_id={hexs(rng, 16)}&redirect_uri=https%3A%2F%2F"
        f"benchmarks.wiki%2Fcallback&scope=read%20write&state={chars(rng, ALNUM, 12)}",
        f"Filter: https://benchmarks.wiki/{pick(rng, ['gsm8k', 'mmlu'])}?tags=%5B%22hard%22%2C%22math%22%5D&page=2",
        f"Encoded prompt: Question%3A%20How%20many%20apples%3F%0AAnswer%3A%20{rng.randint(1, 99)}",
    ])


def blobs(rng):
    """Long lines broken across several: images, certificates, public keys, hashes."""
    png = b64(bytes.fromhex("89504e470d0a1a0a0000000d49484452") + random_bytes(rng, rng.randint(150, 400)))
    digest = hexs(rng, 128)
    return pick(rng, [
        f"Plot, base64 as the API returned it:\n{wrapped(png, 76)}",
        certificate(rng), public_key(rng),
        f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{chars(rng, B64, 43)} {pick(rng, FIRST_NAMES)}@gpu-box",
        f"sha512 of test.jsonl:\n    {digest[:64]}\n    {digest[64:]}",
        f'EXPECTED = (\n    "{digest[:64]}"\n    "{digest[64:]}"\n)',
        f"Checksums:\n  {hexs(rng, 64)} \\\n  {hexs(rng, 64)}",
    ])


SECTIONS = (fields, config, code, environment, task_record, links, table, log, git, data, paths, mentions, prose,
            international, encoded_links, blobs)


def fit(parts):
    """Join sections, dropping the last ones until the post fits the limit."""
    while len(parts) > 1 and len("\n\n".join(parts).encode()) > LIMIT:
        parts = parts[:-1]
    return "\n\n".join(parts).encode()[:LIMIT].decode(errors="ignore").rstrip()


def ordinary_post(rng):
    first = rng.choice((fields, prose, fields))
    rest = rng.sample(SECTIONS, rng.randint(1, 7))
    return fit([first(rng)] + [section(rng) for section in rest if section is not first])


# -- secrets, one maker per family ---------------------------------------------------------------

def name(rng):
    return pick(rng, FIRST_NAMES) + pick(rng, ["", str(rng.randint(1, 99)), "." + chars(rng, LOWER_DIGITS, 3)])


def password(rng):
    """A password with a digit or a symbol, as most sites ask for."""
    return pick(rng, ["", "Pw", "x"]) + chars(rng, ALNUM, rng.randint(6, 14)) + pick(rng, ["1", "!", "#2", "@9"])


def assign(rng, var, value):
    """A value under a variable's name, written the ways a name and a value meet in a post."""
    return pick(rng, [f"{var}={value}", f"export {var}={value}", f'{var}="{value}"', f"{var}: {value}",
                      f'"{var.lower()}": "{value}"', f"Ran with {var}={value} python eval.py",
                      f'{var.lower()} = "{value}"', f"docker run -e {var}={value} evals:latest",
                      f"python run.py --{var.lower().replace('_', '-')} {value}", f"{var.lower()}: '{value}'"])


def jwt(rng):
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64url(json.dumps({"sub": hexs(rng, 12), "iat": rng.randint(1700000000, 1800000000)}).encode())
    return f"{head}.{body}.{chars(rng, URLSAFE, 43)}"


def openai_key(rng):
    return pick(rng, ["sk-proj-" + chars(rng, URLSAFE, 74) + "T3BlbkFJ" + chars(rng, URLSAFE, 74),
                      "sk-" + chars(rng, ALNUM, 48), "sk-svcacct-" + chars(rng, URLSAFE, 60)])


def slack_token(rng):
    team, user = rng.randint(10 ** 11, 10 ** 12), rng.randint(10 ** 11, 10 ** 12)
    return f"xox{pick(rng, 'bpa')}-{team}-{user}-{chars(rng, ALNUM, 24)}"


def url_with_password(rng):
    user, secret = name(rng), password(rng)
    return pick(rng, [f"psql postgres://{user}:{secret}@db.internal:5432/evals",
                      f"DATABASE_URL=mysql://root:{secret}@10.0.0.{rng.randint(2, 250)}/results",
                      f"mongodb+srv://{user}:{secret}@cluster0.{chars(rng, LOWER_DIGITS, 5)}.mongodb.net/",
                      f"redis://:{secret}@cache:6379/0",
                      f"git clone https://{user}:{secret}@git.example.org/evals.git",
                      f"pip install --index-url https://{user}:{secret}@pypi.internal/simple evalkit"])


def azure_storage(rng):
    return (f"AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=evals{hexs(rng, 4)};"
            f"AccountKey={chars(rng, B64, 86)}==;EndpointSuffix=core.windows.net")


def azure_service_bus(rng):
    return (f"Endpoint=sb://evals-{hexs(rng, 4)}.servicebus.windows.net/;SharedAccessKeyName="
            f"RootManageSharedAccessKey;SharedAccessKey={chars(rng, B64, 43)}=")


def azure_sas(rng):
    return (f"https://evals{hexs(rng, 4)}.blob.core.windows.net/runs/preds.jsonl?sv=2022-11-02&ss=b&srt=o"
            f"&sp=r&se=2025-01-01T00:00:00Z&sig={chars(rng, ALNUM, 30)}%2B{chars(rng, ALNUM, 10)}%3D")


def symbol_password(rng):
    """A password with a symbol that a URL should have encoded, left as typed."""
    return (chars(rng, ALNUM, rng.randint(4, 8)) + pick(rng, "@/#!.~*-_+") + chars(rng, ALNUM, rng.randint(3, 6))
            + pick(rng, ["1", "!", "#2", ".9"]))


def database_url(rng, secret):
    user = pick(rng, [name(rng), "evals", "root", "admin", ""])
    scheme, host = pick(rng, [("postgres", "db.internal:5432/evals"), ("postgresql+psycopg2", "10.0.3.7/results"),
                              ("mysql+pymysql", "mysql.internal:3306/runs"),
                              ("mongodb+srv", "cluster0.ab12c.mongodb.net/"),
                              ("redis", "cache:6379/0"), ("rediss", "redis.internal:6380/1"), ("amqp", "mq:5672/%2F"),
                              ("mssql+pyodbc", "sql.internal/evals?driver=ODBC+Driver+18"),
                              ("clickhouse", "ch.internal:8123/default")])
    return f"{scheme}://{user}:{secret}@{host}"


def database_url_in(rng, shape):
    url = database_url(rng, pick(rng, [password(rng), symbol_password(rng)]))
    return {
        "env": lambda: pick(rng, [f"DATABASE_URL={url}", f'DATABASE_URL="{url}"', f"export CELERY_BROKER_URL='{url}'"]),
        "json": lambda: json.dumps({"database": {"url": url, "pool_size": rng.randint(2, 20)}}),
        "escaped json": lambda: json.dumps({"dsn": url}).replace("/", "\\/"),
        "yaml": lambda: f"storage:\n  backend: sql\n  url: \"{url}\"",
        "code": lambda: pick(rng, [f'engine = create_engine("{url}")', f"client = MongoClient('{url}')",
                                   f'r = redis.from_url("{url}")']),
        "command": lambda: pick(rng, [f'psql "{url}" -c "select count(*) from runs"',
                                      f"celery -A evals worker --broker={url}"]),
        "prose": lambda: f"The results are in {url} if you want to check them.",
    }[shape]()


PASSWORD_NAMES = ["DB_PASS", "PASSWORD", "db_pass", "ADMIN_PASSWD", "DB_PASSWORD_PROD", "pass", "DB_PW",
                  "MYSQL_ROOT_PASSWORD", "smtp_password", "adminPassword", "PG_PASS_STAGING"]
SECRET_NAMES = ["SECRET", "client_secret", "APP_SECRET_KEY", "JWT_SECRET", "SESSION_SECRET", "WEBHOOK_SECRET_PROD",
                "clientSecret", "NEXTAUTH_SECRET", "secret_value", "AUTH_SECRET_NEW"]


def generated_secret(rng):
    return pick(rng, [chars(rng, ALNUM, 32), hexs(rng, 64), b64(bytes(rng.randrange(256) for _ in range(32))),
                      chars(rng, URLSAFE, 43)])


def config_line(rng, var, value):
    """A value under a name in a .env file, YAML, JSON, a compose file or code."""
    return pick(rng, [f"{var}={value}", f'{var}="{value}"', f"{var.lower()}: {value}", f'  {var.lower()}: "{value}"',
                      json.dumps({var: value}), f"      - {var}={value}", f'settings.{var} = "{value}"'])


def command_password(rng):
    secret, user = password(rng), name(rng)
    return pick(rng, [
        f"python upload.py --user {user} --password {secret}", f"wget --user={user} --password={secret} {LINK}",
        f"sshpass -p'{secret}' scp preds.jsonl {user}@gpu-1:", f"PGPASSWORD={secret} psql -h db -U evals -c 'select 1'",
        f"mysql -u root -p'{secret}' results", f"htpasswd -b -c .htpasswd {user} {secret}",
        f"htpasswd -nb {user} {secret}", f"sqlcmd -S db -U sa -P {secret} -Q 'SELECT 1'",
        f"ldapsearch -x -D cn=admin,dc=evals -w {secret} -b dc=evals", f"echo '{secret}' | sudo -S nvidia-smi -pm 1",
        f"java -Djavax.net.ssl.keyStorePassword={secret} -jar judge.jar",
        f"keytool -list -keystore ks.jks -storepass {secret}",
        f"smbclient //nas/evals -U {user}%{secret}", f"rabbitmqctl add_user {user} {secret}",
        f"7z x results.7z -p{secret}", f"unzip -P {secret} runs.zip", f"az login --service-principal -u {uuid(rng)} "
        f"-p {secret} --tenant {uuid(rng)}", f"sqlplus {user}/{secret}@evals"])


LINK = "https://files.example.org/runs.tar.gz"


def azure_ad_secret(rng):
    return (chars(rng, ALNUM + "_.~", 3) + str(rng.randint(0, 9)) + "Q~"
            + chars(rng, ALNUM + "_.~-", 34))


def telegram_token(rng):
    return f"{rng.randint(10 ** 7, 10 ** 10 - 1)}:{chars(rng, URLSAFE, 35)}"


def provider_key(rng, var, key):
    """A provider's key under its name, in a header, in code, in JSON or in prose."""
    return pick(rng, [assign(rng, var, key), f'curl -H "Authorization: Bearer {key}" https://api.example.com/v1/models',
                      f'client = OpenAI(base_url="https://api.example.com/v1", api_key="{key}")',
                      json.dumps({"provider": var.split("_")[0].lower(), "api_key": key}),
                      f"I ran the judge with my key {key} and got the same score.",
                      f"judge:\n  key: {key}"])


def provider_token(rng):
    """A token of one of the commonest kinds, and its prefix."""
    prefix, body = pick(rng, [(pick(rng, ["ghp_", "gho_", "ghs_"]), chars(rng, ALNUM, 36)),
                              ("hf_", chars(rng, ALNUM, 34)), ("sk-proj-", chars(rng, URLSAFE, 60) + "7"),
                              ("pypi-AgE", "IcHlwaS5vcmc" + chars(rng, URLSAFE, 70)),
                              ("glpat-", chars(rng, URLSAFE, 20)),
                              ("npm_", chars(rng, ALNUM, 36)), ("xoxb-", f"{rng.randint(10 ** 11, 10 ** 12)}-"
                                                                         f"{chars(rng, ALNUM, 24)}"),
                              ("sk-ant-api03-", chars(rng, URLSAFE, 93) + "AA")])
    return prefix, body


def in_a_post(rng, token):
    return pick(rng, [assign(rng, "API_TOKEN", token), f"The run used {token} as its token.",
                      f'client = Client(token="{token}")'])


INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]
LOOK_ALIKES = {"a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "x": "х", "s": "ѕ", "i": "і", "h": "һ",
               "k": "κ", "A": "А", "E": "Ε"}


def full_width(text):
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def with_inside(rng, text, inserts):
    """``text`` with each of ``inserts`` put at a random place after its first character."""
    for insert in inserts:
        at = rng.randrange(1, len(text))
        text = text[:at] + insert + text[at:]
    return text


def full_width_token(rng):
    prefix, body = provider_token(rng)
    return pick(rng, [full_width(prefix) + body, full_width(prefix + body)])


def look_alike_token(rng):
    """A token with one or more of its prefix's letters swapped for another script's look-alike."""
    prefix, body = provider_token(rng)
    letters = [i for i, c in enumerate(prefix) if c in LOOK_ALIKES]
    for i in rng.sample(letters, rng.randint(1, len(letters))):
        prefix = prefix[:i] + LOOK_ALIKES[prefix[i]] + prefix[i + 1:]
    return prefix + body


def wrapped_token(rng, backslash):
    prefix, body = provider_token(rng)
    token = prefix + body
    at = rng.randint(16, len(token) - 6)
    head, tail = token[:at], token[at:]
    if backslash:
        return f"export API_TOKEN={head}\\\n{' ' * rng.randint(0, 4)}{tail}"
    return pick(rng, [f"api_token: {head}\n{' ' * rng.randint(2, 10)}{tail}", f"{head}\n{tail}",
                      f'token = "{head}\n{tail}"'])


def percent_encoded(rng):
    prefix, body = provider_token(rng)
    token = prefix + body
    encoded = pick(rng, [token.replace("_", "%5F").replace("-", "%2D"), "".join(f"%{ord(c):02X}" for c in token),
                         "".join(f"%{ord(c):02x}" if c in "_-" or rng.random() < 0.3 else c for c in token)])
    return pick(rng, [f"GET https://api.example.com/v1/runs?access_token={encoded}&limit=10",
                      f'curl "https://hooks.example.org/notify?token={encoded}"',
                      f"Redirected to https://benchmarks.wiki/callback?next=%2Fruns&t={encoded}"])


def no_break_spaces(rng):
    space = pick(rng, ["\u00a0", "\u202f"])
    return pick(rng, [f"DB_PASSWORD{space}={space}{password(rng)}", f"api_key{space}:{space}{chars(rng, ALNUM, 32)}",
                      f"SECRET_KEY{space}={space}'{generated_secret(rng)}'",
                      f"export HF_TOKEN={space}hf_{chars(rng, ALNUM, 34)}"])


def key_without_header(rng, der_prefix, size):
    """A private key's base64 lines, as pasted without the armour around them."""
    body = wrapped(b64(bytes.fromhex(der_prefix) + random_bytes(rng, size)), 64)
    return pick(rng, [body, f"key = \"\"\"\n{body}\n\"\"\"", f"```\n{body}\n```"])


# One maker per family of leak the check claims to catch; each returns a line or a block.
FAMILIES = {
    "private key block": lambda rng: armor(
        pick(rng, ["RSA ", "EC ", "OPENSSH ", "", "ENCRYPTED ", "DSA "]) + "PRIVATE KEY", key_body(rng)),
    "PGP private key block": lambda rng: armor("PGP PRIVATE KEY BLOCK", "\n" + key_body(rng)),
    "PuTTY private key": lambda rng: (f"PuTTY-User-Key-File-{rng.choice([2, 3])}: ssh-ed25519\nEncryption: none\n"
                                      f"Comment: eval-box\nPublic-Lines: 2\n{chars(rng, B64, 64)}"),
    "AWS access key id": lambda rng: assign(
        rng, "AWS_ACCESS_KEY_ID", pick(rng, ["AKIA", "ASIA"]) + chars(rng, UPPER_DIGITS, 16)),
    "AWS secret access key": lambda rng: pick(rng, [f"aws_secret_access_key = {chars(rng, B64, 40)}",
                                                    assign(rng, "AWS_SECRET_ACCESS_KEY", chars(rng, B64, 40))]),
    "GitHub token": lambda rng: pick(rng, [
        assign(rng, "GITHUB_TOKEN", pick(rng, ["ghp_", "gho_", "ghs_", "ghu_"]) + chars(rng, ALNUM, 36)),
        f"git clone https://x-access-token:ghs_{chars(rng, ALNUM, 36)}@github.com/org/repo",
        f"github_pat_{chars(rng, ALNUM, 22)}_{chars(rng, ALNUM, 59)}"]),
    "GitLab token": lambda rng: assign(rng, pick(rng, ["GITLAB_TOKEN", "CI_JOB_TOKEN", "RUNNER_TOKEN"]),
                                       pick(rng, ["glpat-", "gldt-", "glrt-"]) + chars(rng, URLSAFE, 20)),
    "Slack token": lambda rng: assign(rng, "SLACK_BOT_TOKEN", slack_token(rng)),
    "Slack app token": lambda rng: (f"SLACK_APP_TOKEN=xapp-1-A{chars(rng, UPPER_DIGITS, 10)}"
                                    f"-{rng.randint(10 ** 12, 10 ** 13)}-{hexs(rng, 64)}"),
    "Slack webhook": lambda rng: (f"Posted results to https://hooks.slack.com/services/T{chars(rng, UPPER_DIGITS, 8)}/"
                                  f"B{chars(rng, UPPER_DIGITS, 10)}/{chars(rng, ALNUM, 24)}"),
    "Discord bot token": lambda rng: assign(rng, "DISCORD_TOKEN", f"{pick(rng, 'MNO')}{chars(rng, URLSAFE, 23)}."
                                            f"{chars(rng, URLSAFE, 6)}.{chars(rng, URLSAFE, 38)}"),
    "Discord webhook": lambda rng: (f"webhook: https://discord.com/api/webhooks/{rng.randint(10 ** 17, 10 ** 18)}/"
                                    f"{chars(rng, URLSAFE, 68)}"),
    "Telegram bot token": lambda rng: assign(
        rng, "TELEGRAM_BOT_TOKEN", f"{rng.randint(10 ** 8, 10 ** 10)}:AA{chars(rng, URLSAFE, 33)}"),
    "Twilio": lambda rng: pick(rng, [f"TWILIO_API_KEY=SK{hexs(rng, 32)}",
                                     assign(rng, "TWILIO_AUTH_TOKEN", hexs(rng, 32))]),
    "SendGrid": lambda rng: assign(
        rng, "SENDGRID_API_KEY", f"SG.{chars(rng, URLSAFE, 22)}.{chars(rng, URLSAFE, 43)}"),
    "npm": lambda rng: pick(rng, [f"//registry.npmjs.org/:_authToken=npm_{chars(rng, ALNUM, 36)}",
                                  assign(rng, "NPM_TOKEN", "npm_" + chars(rng, ALNUM, 36))]),
    "PyPI": lambda rng: pick(rng, [
        f"[pypi]\nusername = __token__\npassword = pypi-AgEIcHlwaS5vcmc{chars(rng, URLSAFE, 70)}",
        f"twine upload -u __token__ -p pypi-AgEIcHlwaS5vcmc{chars(rng, URLSAFE, 90)} dist/*"]),
    "Stripe": lambda rng: assign(
        rng, "STRIPE_SECRET_KEY", pick(rng, ["sk_live_", "rk_live_", "sk_test_"]) + chars(rng, ALNUM, 24)),
    "Stripe webhook secret": lambda rng: assign(rng, "STRIPE_WEBHOOK_SECRET", "whsec_" + chars(rng, ALNUM, 32)),
    "Hugging Face token": lambda rng: pick(rng, [assign(rng, "HF_TOKEN", "hf_" + chars(rng, ALNUM, 34)),
                                                 f"huggingface-cli login --token hf_{chars(rng, ALNUM, 34)}",
                                                 f'login(token="hf_{chars(rng, ALNUM, 34)}")']),
    "Hugging Face org key": lambda rng: "api_org_" + chars(rng, ALNUM, 34),
    "Google API key": lambda rng: pick(rng, [
        assign(rng, "GOOGLE_API_KEY", "AIza" + chars(rng, URLSAFE, 35)),
        f"https://generativelanguage.googleapis.com/v1beta/models?key=AIza{chars(rng, URLSAFE, 35)}"]),
    "Google OAuth client secret": lambda rng: f'"client_secret": "GOCSPX-{chars(rng, URLSAFE, 28)}"',
    "Google OAuth access token": lambda rng: f"access token ya29.{chars(rng, URLSAFE, 120)}",
    "OpenAI": lambda rng: assign(rng, "OPENAI_API_KEY", openai_key(rng)),
    "Anthropic": lambda rng: assign(rng, "ANTHROPIC_API_KEY", "sk-ant-api03-" + chars(rng, URLSAFE, 93) + "AA"),
    "OpenRouter": lambda rng: assign(rng, "OPENROUTER_API_KEY", "sk-or-v1-" + hexs(rng, 64)),
    "Groq": lambda rng: assign(rng, "GROQ_API_KEY", "gsk_" + chars(rng, ALNUM, 52)),
    "Replicate": lambda rng: assign(rng, "REPLICATE_API_TOKEN", "r8_" + chars(rng, ALNUM, 37)),
    "Perplexity": lambda rng: assign(rng, "PPLX_API_KEY", "pplx-" + chars(rng, ALNUM, 48)),
    "xAI": lambda rng: assign(rng, "XAI_API_KEY", "xai-" + chars(rng, ALNUM, 80)),
    "Together": lambda rng: assign(rng, "TOGETHER_API_KEY",
                                   pick(rng, ["tgp_v1_" + chars(rng, URLSAFE, 43), hexs(rng, 64)])),
    "W&B": lambda rng: pick(rng, [assign(rng, "WANDB_API_KEY", hexs(rng, 40)), f"wandb login {hexs(rng, 40)}",
                                  f"machine api.wandb.ai\n  login user\n  password {hexs(rng, 40)}"]),
    "LangSmith": lambda rng: assign(
        rng, "LANGSMITH_API_KEY", f"lsv2_{pick(rng, ['pt', 'sk'])}_{hexs(rng, 32)}_{hexs(rng, 10)}"),
    "Databricks": lambda rng: assign(rng, "DATABRICKS_TOKEN", "dapi" + hexs(rng, 32)),
    "Azure storage connection string": azure_storage,
    "Azure Service Bus": azure_service_bus,
    "Azure SAS": azure_sas,
    "Azure OpenAI key": lambda rng: pick(rng, [
        assign(rng, "AZURE_OPENAI_API_KEY", hexs(rng, 32)),
        f"curl -H 'api-key: {hexs(rng, 32)}' https://evals.openai.azure.com/"]),
    "JSON web token": lambda rng: pick(rng, [f"session token: {jwt(rng)}", f"id_token={jwt(rng)}"]),
    "password in a URL": url_with_password,
    "Authorization header": lambda rng: pick(rng, [
        f"curl -H 'Authorization: Bearer {chars(rng, ALNUM, 40)}' https://api.example.com/v1/runs",
        f"Authorization: Basic {b64((name(rng) + ':' + password(rng)).encode())}",
        f'headers = {{"Authorization": "token {chars(rng, ALNUM, 32)}"}}']),
    "X-API-Key header": lambda rng: pick(rng, [f'-H "X-API-Key: {chars(rng, ALNUM, 32)}"',
                                               f"x-api-key: {chars(rng, ALNUM, 40)}"]),
    "sshpass": lambda rng: f"sshpass -p '{password(rng)}' ssh {name(rng)}@gpu-{rng.randint(1, 9)} nvidia-smi",
    "mysql": lambda rng: f"mysql -h db -u root -p{password(rng)} results < dump.sql",
    "redis-cli": lambda rng: f"redis-cli -h cache -a {password(rng)} FLUSHALL",
    "docker login": lambda rng: f"docker login -u {name(rng)} -p {password(rng)} registry.example.com",
    "curl -u": lambda rng: f"curl -u {name(rng)}:{password(rng)} https://example.com/api/upload -F file=@preds.jsonl",
    "mongosh": lambda rng: f"mongosh --host db -u admin -p {password(rng)} --eval 'db.runs.count()'",
    "openssl": lambda rng: f"openssl pkcs12 -in cert.p12 -passin pass:{password(rng)} -nodes",
    "netrc": lambda rng: f"machine example.com login {name(rng)} password {password(rng)}",
    "secret assignment": lambda rng: assign(
        rng, pick(rng, ["MISTRAL_API_KEY", "COHERE_API_KEY", "DEEPSEEK_API_KEY", "FIREWORKS_API_KEY", "API_KEY",
                        "CLIENT_SECRET"]), chars(rng, ALNUM, rng.choice([32, 40]))),
    "inline assignment": lambda rng: (f"then `{pick(rng, ['EVAL_API_KEY', 'JUDGE_TOKEN', 'apiKey'])}="
                                      f"{chars(rng, ALNUM, 32)} python judge.py` scored it"),
    "YAML secret": lambda rng: f"judge:\n  model: {pick(rng, API_MODELS)}\n  api_key: {chars(rng, ALNUM, 40)}",
    "JSON secret": lambda rng: json.dumps({"model": pick(rng, API_MODELS), "secret": chars(rng, B64, 44)}),
    "short hex key": lambda rng: assign(rng, pick(rng, ["DD_API_KEY", "api_secret", "AUTH_TOKEN", "SECRET_KEY"]),
                                        hexs(rng, rng.choice([16, 24, 32]))),
    "password": lambda rng: assign(
        rng, pick(rng, ["DB_PASSWORD", "PGPASSWORD", "password", "REDIS_PASS", "MYSQL_PWD"]), password(rng)),
    "Django secret key": lambda rng: (f"SECRET_KEY = 'django-insecure-"
                                      f"{chars(rng, string.ascii_lowercase + string.digits + '!@#%^&*-_=+', 50)}'"),
    "session cookie": lambda rng: pick(rng, [
        f"Cookie: sessionid={chars(rng, LOWER_DIGITS, 32)}; csrftoken={chars(rng, ALNUM, 32)}",
        f"session_token={chars(rng, URLSAFE, 43)}"]),
    "database URL in .env": lambda rng: database_url_in(rng, "env"),
    "database URL in JSON": lambda rng: database_url_in(rng, "json"),
    "database URL in JSON with escaped slashes": lambda rng: database_url_in(rng, "escaped json"),
    "database URL in YAML": lambda rng: database_url_in(rng, "yaml"),
    "database URL in code": lambda rng: database_url_in(rng, "code"),
    "database URL in a command": lambda rng: database_url_in(rng, "command"),
    "database URL in prose": lambda rng: database_url_in(rng, "prose"),
    "password under a password's name": lambda rng: config_line(rng, pick(rng, PASSWORD_NAMES), password(rng)),
    "secret under a secret's name": lambda rng: config_line(rng, pick(rng, SECRET_NAMES), generated_secret(rng)),
    "password in a command line": command_password,
    "Azure AD client secret": lambda rng: pick(rng, [
        assign(rng, "AZURE_CLIENT_SECRET", azure_ad_secret(rng)),
        json.dumps({"tenantId": uuid(rng), "clientId": uuid(rng), "clientSecret": azure_ad_secret(rng)}),
        f'cred = ClientSecretCredential("{uuid(rng)}", "{uuid(rng)}", "{azure_ad_secret(rng)}")',
        f"The app registration's secret is {azure_ad_secret(rng)}, valid for a year.",
        f"az login --service-principal -u {uuid(rng)} -p {azure_ad_secret(rng)} --tenant {uuid(rng)}"]),
    "Twilio API key": lambda rng: pick(rng, [
        f"TWILIO_API_KEY=SK{hexs(rng, 32).upper()}", f'client = Client("SK{hexs(rng, 32)}", api_secret, account_sid)',
        json.dumps({"twilio": {"api_key": "SK" + pick(rng, [hexs(rng, 32), hexs(rng, 32).upper()])}})]),
    "Twilio auth token beside its account": lambda rng: pick(rng, [
        f'client = Client("AC{hexs(rng, 32)}", "{hexs(rng, 32)}")',
        f"curl -X POST https://api.twilio.com/2010-04-01/Accounts/AC{hexs(rng, 32)}/Messages.json "
        f"-u AC{hexs(rng, 32)}:{hexs(rng, 32)}",
        json.dumps({"account_sid": "AC" + hexs(rng, 32), "auth_token": hexs(rng, 32).upper()}),
        f"TWILIO_ACCOUNT_SID=AC{hexs(rng, 32)}\nTWILIO_AUTH_TOKEN={hexs(rng, 32)}"]),
    "Telegram bot token, any letters": lambda rng: pick(rng, [
        assign(rng, "TELEGRAM_BOT_TOKEN", telegram_token(rng)),
        f'app = Application.builder().token("{telegram_token(rng)}").build()',
        json.dumps({"telegram": {"token": telegram_token(rng), "chat_id": -rng.randint(10 ** 9, 10 ** 12)}})]),
    "Telegram bot URL": lambda rng: (f"curl https://api.telegram.org/bot{telegram_token(rng)}/sendMessage"
                                     f" -d chat_id={rng.randint(10 ** 6, 10 ** 9)} -d text=done"),
    "Fireworks": lambda rng: provider_key(rng, "FIREWORKS_API_KEY", "fw_" + chars(rng, ALNUM, rng.choice([24, 40]))),
    "Anyscale": lambda rng: provider_key(rng, "ANYSCALE_API_KEY", "esecret_" + chars(rng, ALNUM, 26)),
    "Cerebras": lambda rng: provider_key(rng, "CEREBRAS_API_KEY", "csk-" + chars(rng, LOWER_DIGITS, 48)),
    "Voyage AI": lambda rng: provider_key(rng, "VOYAGE_API_KEY", "pa-" + chars(rng, ALNUM, 20) + str(rng.randint(0, 9))
                                          + chars(rng, URLSAFE, 22)),
    "ElevenLabs": lambda rng: provider_key(rng, "ELEVENLABS_API_KEY", "sk_" + hexs(rng, 48)),
    "NVIDIA": lambda rng: provider_key(rng, "NVIDIA_API_KEY", "nvapi-" + chars(rng, URLSAFE, 64)),
    "Tavily": lambda rng: provider_key(rng, "TAVILY_API_KEY",
                                       "tvly-" + pick(rng, ["", "dev-"]) + chars(rng, ALNUM, 32)),
    "Pinecone": lambda rng: provider_key(rng, "PINECONE_API_KEY",
                                         f"pcsk_{chars(rng, ALNUM, 6)}_{chars(rng, ALNUM, 63)}"),
    "OpenAI project key": lambda rng: provider_key(
        rng, "OPENAI_API_KEY", "sk-proj-" + chars(rng, string.ascii_letters + "-_", 74) + "T3BlbkFJ"
        + chars(rng, URLSAFE, 74)),
    "Anthropic admin key": lambda rng: provider_key(
        rng, "ANTHROPIC_ADMIN_KEY", "sk-ant-admin01-" + chars(rng, URLSAFE, 93) + "AA"),
    "zero-width characters in a token": lambda rng: in_a_post(
        rng, with_inside(rng, "".join(provider_token(rng)), rng.sample(INVISIBLE, rng.randint(1, 3)))),
    "soft hyphens in a token": lambda rng: in_a_post(
        rng, with_inside(rng, "".join(provider_token(rng)), ["\u00ad"] * rng.randint(1, 3))),
    "full-width token": lambda rng: in_a_post(rng, full_width_token(rng)),
    "look-alike letters in a token's prefix": lambda rng: in_a_post(rng, look_alike_token(rng)),
    "token wrapped onto the next line": lambda rng: wrapped_token(rng, backslash=False),
    "token wrapped after a backslash": lambda rng: wrapped_token(rng, backslash=True),
    "percent-encoded token": percent_encoded,
    "no-break spaces around the operator": no_break_spaces,
    "PKCS#8 private key without its header": lambda rng: key_without_header(
        rng, pick(rng, ["308204bd020100300d06092a864886f70d0101010500048204a7",
                        "308206fe020100300d06092a864886f70d0101010500048206e8"]), 900),
    "RSA private key without its header": lambda rng: key_without_header(rng, "308204a40201000282010100", 900),
    "EC private key without its header": lambda rng: key_without_header(rng, "30770201010420", 100),
    "OpenSSH private key without its header": lambda rng: key_without_header(
        rng, b"openssh-key-v1\0".hex() + "0000000a6165733235362d637472", 300),
    "home path /home": lambda rng: f"Outputs are in /home/{name(rng)}/evals/run-{rng.randint(1, 9)}/preds.jsonl",
    "home path /Users": lambda rng: f'  File "/Users/{name(rng)}/code/evals/run.py", line {rng.randint(1, 200)}',
    "home path /root": lambda rng: f"cached at /root/.cache/huggingface/hub/models--{pick(rng, REPOS)}",
    "home path ~/": lambda rng: f"Config in ~/.config/{pick(rng, REPOS)}/settings.toml",
    "home path file:///Users": lambda rng: f"Report: file:///Users/{name(rng)}/Desktop/report.html",
    "home path file:///home": lambda rng: f"open file:///home/{name(rng)}/runs/index.html",
    "home path C:\\Users": lambda rng: f"Wrote C:\\Users\\{name(rng).capitalize()}\\Documents\\evals\\out.csv",
    "home path C:/Users": lambda rng: f"python C:/Users/{name(rng)}/evals/run.py --limit 50",
    "home path /mnt/c/Users": lambda rng: f"From WSL: /mnt/c/Users/{name(rng)}/Downloads/test.jsonl",
    "home path in JSON": lambda rng: json.dumps({"output_dir": f"C:\\Users\\{name(rng)}\\runs"}),
}

# Leaks the check does not claim to catch, kept in the corpus so that recall is not measured
# only on the shapes the rules were written for.
KNOWN_GAPS = {
    "key in prose, no name": lambda rng: f"The judge used my Mistral key {chars(rng, ALNUM, 32)} for this run.",
    "key passed positionally": lambda rng: f'client = Mistral("{chars(rng, ALNUM, 32)}")',
    "password of letters only": lambda rng: assign(rng, "DB_PASSWORD", chars(rng, string.ascii_letters, 10)),
}


def secret_post(rng, family):
    """A realistic post with one secret in it, and the 1-based lines the secret spans."""
    snippet = {**FAMILIES, **KNOWN_GAPS}[family](rng)
    body = ordinary_post(rng).split("\n")
    at = rng.randrange(len(body) + 1)
    if "\n" not in snippet and not snippet.endswith(".") and rng.random() < 0.3:
        snippet = pick(rng, [f"Before the run: {snippet}", f"(I used {snippet} for this.)"])
    block = snippet.split("\n")
    body[at:at] = block
    span = len(block)
    while len("\n".join(body).encode()) > LIMIT:
        if at + span < len(body):
            body.pop()
        else:
            body.pop(0)
            at -= 1
    return "\n".join(body), (at + 1, at + span)


def secret_posts(per_family=4, seed=SEED):
    rng = random.Random(seed)
    return [(family, *secret_post(rng, family)) for family in [*FAMILIES, *KNOWN_GAPS] for _ in range(per_family)]


def ordinary_posts(count=800, seed=SEED):
    rng = random.Random(seed + 1)
    return [ordinary_post(rng) for _ in range(count)]


def caught(post, lines):
    first, last = lines
    return any(first <= line <= last for _, line, _ in find_sensitive(post))


ADVERSARIAL_PIECES = (
    "a", "A", "0", "=", ":", "/", "-", "_", ".", "@", "~", "\\", "$", "'", '"', " ", "\n", "+", "%", "key=", "a:",
    "a=", "://", "://a:", "a:b@", "-p ", "--token ", "--a ", "sk-", "sk-a", "eyJ", "eyJa.", "hf_", "ghp_",
    "-----BEGIN ", "BEGIN A ", "mysql ", "mysql -p", "curl -u a:", "docker login ", "/home/", "~/", "C:\\Users\\",
    "/mnt/c/", "Authorization: ", "Authorization: Bearer ", "AccountKey=", "&sig=", 'a="', "a='", "x://a:",
    "1234567890:AA", "M" + "a" * 23 + ".", "api_key: ", "API_KEY=", "password=", "machine a login b password ",
    "\t=\t", "a-", "a.", "0:", "1234567890:", "/bot1", "abc8Q~", "AC" + "0" * 32 + " ", "htpasswd -b ",
    "htpasswd -nb a ", "postgres://a:", ":\\/\\/a:", "a@", "-Dpassword=", "echo a ", "| sudo -S ", "sqlplus a/",
    "-storepass ", "pa-", "nvapi-", "smbclient -U a%", "DB_PASSWORD_PROD=",
    # What folding reads: characters it changes, escapes, and lines that each go on with the last.
    "\u00e9", "\u00e9\n", "\u200b", "a\u00ad", "\uff47", "\u0430", "%41", "%41\n", "%5F", "a\u00a0=\u00a0",
    "a" * 16 + "\n", "a" * 16 + "\\\n  ", "key=" + "a" * 16 + "\n", "MIIEvQIBADAN")


def adversarial_inputs():
    """Texts of 2 KiB meant to make a regular expression backtrack: repetitions and a seeded fuzz."""
    inputs = [(piece * LIMIT).encode()[:LIMIT].decode(errors="ignore") for piece in ADVERSARIAL_PIECES]
    prefixes = ("sk-", "hf_", "api_key=", "https://", "-----BEGIN ")
    inputs += [prefix + "a" * (LIMIT - len(prefix)) for prefix in prefixes]
    rng = random.Random(SEED + 2)
    alphabet = list("aA0=:/-_.@~\\$'\" \n+%&?#") + ["key", "token", "://", "sk-", "eyJ", "Users", "home"]
    inputs += ["".join(rng.choice(alphabet) for _ in range(LIMIT))[:LIMIT] for _ in range(40)]
    return inputs


def timed(text, repeat=5):
    """The best of a few runs, in milliseconds: the cost of the check, not of the machine's hiccups."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        find_sensitive(text)
        best = min(best, time.perf_counter() - start)
    return best * 1000


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m tests.secret_corpus", description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=SEED, help=f"the seed the posts are made from (default {SEED})")
    seed = parser.parse_args(argv).seed
    bearing, ordinary = secret_posts(seed=seed), ordinary_posts(seed=seed)
    missed = [(family, "\n".join(post.split("\n")[lines[0] - 1:lines[1]]))
              for family, post, lines in bearing if not caught(post, lines)]
    refused = [(post, find_sensitive(post)) for post in ordinary if find_sensitive(post)]
    times = [timed(post) for _, post, _ in bearing] + [timed(post) for post in ordinary]
    hostile = [timed(text) for text in adversarial_inputs()]
    print(f"posts made from seed {seed}")
    print(f"secret-bearing posts caught: {len(bearing) - len(missed)}/{len(bearing)} "
          f"({100 * (1 - len(missed) / len(bearing)):.1f}%): {len(FAMILIES)} families the check claims "
          f"and {len(KNOWN_GAPS)} it does not")
    claimed = [post for post in bearing if post[0] in FAMILIES]
    missed_claimed = [family for family, _ in missed if family in FAMILIES]
    print(f"  of them in the families it claims: {len(claimed) - len(missed_claimed)}/{len(claimed)} "
          f"({100 * (1 - len(missed_claimed) / len(claimed)):.1f}%)")
    for family, snippet in missed:
        print(f"  missed ({family}): {snippet[:200]!r}")
    print(f"ordinary posts refused: {len(refused)}/{len(ordinary)} ({100 * len(refused) / len(ordinary):.2f}%)")
    for post, findings in refused:
        print(f"  refused {findings}: {post[:200]!r}")
    print(f"time per post (best of 5, {len(times)} posts up to {LIMIT} bytes): worst {max(times):.2f} ms, "
          f"median {statistics.median(times):.2f} ms")
    print(f"adversarial inputs of {LIMIT} bytes ({len(hostile)}): worst {max(hostile):.2f} ms")


if __name__ == "__main__":
    main()
