"""EngineArgs.create_engine_config: refuses what real vLLM 0.33.0 refuses, in its words."""

import os
import sys


class AsyncEngineArgs:
    def __init__(self, **fields: object) -> None:
        self.__dict__.update(fields)

    @classmethod
    def from_cli_args(cls, args: object) -> "AsyncEngineArgs":
        return cls(**vars(args))

    def create_engine_config(self, usage_context: object = None, headless: bool = False) -> dict:
        print("INFO fake vLLM: creating the engine config")  # vLLM's logger writes to stdout
        if os.environ.get("FAKE_VLLM_CRASH"):
            sys.stderr.write("fatal: the fake engine crashed\n")
            sys.stderr.flush()
            os._exit(7)
        if os.environ.get("FAKE_VLLM_REFUSE"):
            raise RuntimeError("the fake vLLM refuses this launch for a reason nobody knows")
        if self.model.startswith("./") and not os.path.isdir(self.model):
            raise ValueError(f"Invalid repository ID or local directory specified: '{self.model}'.")
        n = self.max_model_len
        if n is not None and n > 2048 and os.environ.get("VLLM_ALLOW_LONG_MAX_MODEL_LEN") != "1":
            raise ValueError(
                f"User-specified max_model_len ({n}) is greater than the derived max_model_len "
                "(max_position_embeddings=2048 or model_max_length=None in model's config.json). To allow "
                "overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1."
            )
        if self.gpu_memory_utilization > float(os.environ.get("FAKE_VLLM_GPU_LIMIT", "1")):
            raise ValueError(
                "1 validation error for CacheConfig\ngpu_memory_utilization\n  Input should be less than or "
                f"equal to 1 [type=less_than_equal, input_value={self.gpu_memory_utilization}, input_type=float]"
            )
        if self.use_replayssm and self.mamba_backend not in ("triton", "flashinfer"):
            raise ValueError("--use-replayssm requires --mamba-backend triton or flashinfer")
        if 32 % self.tensor_parallel_size:
            raise ValueError(
                "Total number of attention heads (32) must be divisible by tensor parallel size "
                f"({self.tensor_parallel_size})."
            )
        return {"model": self.model}
