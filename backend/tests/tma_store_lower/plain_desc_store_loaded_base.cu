// threads 128, dynamic shared memory 25600 bytes
extern "C" __global__ void __launch_bounds__(128) loaded_desc_store(long long* __restrict__ c_ptrs_, tw_f16* __restrict__ a_ptr_, tw_f16* __restrict__ b_ptr_, int M_, int N_) {
  const int tid = threadIdx.x;
  const int lane = threadIdx.x & 31;
  const int warp = __shfl_sync(0xffffffff, (int)(threadIdx.x >> 5), 0);
  (void)tid; (void)lane; (void)warp;
  const unsigned tw_smem_u32 = (unsigned)__cvta_generic_to_shared(tw_smem_raw);
  (void)tw_smem_u32;
  unsigned char* const tw_smem = tw_smem_raw + 16384;
  // 9:13  
  long long const t1 = *c_ptrs_;
  tw_f16* const c_ptr_2 = (tw_f16*)(unsigned long long)(t1);
  // 10:69  
  long long const t3 = (long long)(N_);
  long long const t4 = (long long)(1LL);
  tw_f16* const c_desc_5_base = (tw_f16*)(c_ptr_2);
  long long const c_desc_5_shape0 = (long long)(M_);
  long long const c_desc_5_shape1 = (long long)(N_);
  long long const c_desc_5_stride0 = (long long)(t3);
  long long const c_desc_5_stride1 = (long long)(t4);
  // 11:12  
  int offs_6[8];
  #pragma unroll
  for (int r = 0; r < 8; ++r) offs_6[r] = 0 + (((lane % 8) * 8 + ((r / 1) % 8) * 1) & 63);
  // 12:25  
  int offs_8[4];
  #pragma unroll
  for (int r = 0; r < 4; ++r) offs_8[r] = 0 + (((lane / 8 % 4) + (warp % 4) * 4 + ((r / 1) % 4) * 16) & 63);
  int t7[32];
  #pragma unroll
  for (int r = 0; r < 32; ++r) t7[r] = offs_8[((r / 8) % 4) * 1];
  int const t9 = (int)(64LL);
  int t10[32];
  #pragma unroll
  for (int r = 0; r < 32; ++r) t10[r] = t9;
  int t11[32];
  #pragma unroll
  for (int r = 0; r < 32; ++r) t11[r] = (int)((unsigned)t7[r] * (unsigned)t10[r]);
  tw_f16* t12[32];
  #pragma unroll
  for (int r = 0; r < 32; ++r) t12[r] = a_ptr_;
  tw_f16* t13[32];
  #pragma unroll
  for (int r = 0; r < 32; ++r) t13[r] = t12[r] + t11[r];
  int t14[8];
  #pragma unroll
  for (int r = 0; r < 8; ++r) t14[r] = offs_6[((r / 1) % 8) * 1];
  tw_f16* t15[32];
  #pragma unroll
  for (int r = 0; r < 32; ++r) t15[r] = t13[((r / 8) % 4) * 8];
  int t16[32];
  #pragma unroll
  for (int r = 0; r < 32; ++r) t16[r] = t14[((r / 1) % 8) * 1];
  tw_f16* t17[32];
  #pragma unroll
  for (int r = 0; r < 32; ++r) t17[r] = t15[r] + t16[r];
  tw_f16 a_18[32];
  #pragma unroll
  for (int g = 0; g < 4; ++g) {
    union { uint4 u; tw_f16 e[8]; } t;
    t.u = *(const uint4*)(t17[g * 8]);
    #pragma unroll
    for (int e = 0; e < 8; ++e) a_18[g * 8 + e] = t.e[e];
  }
  __syncthreads();
  #pragma unroll
  for (int r = 0; r < 32; r += 8) {
    union { uint4 u; tw_f16 e[8]; } t;
  #pragma unroll
    for (int e = 0; e < 8; ++e) t.e[e] = a_18[r + e];
    *(uint4*)(tw_smem_raw + 0 + tw_swz((((lane / 8 % 4) + (warp % 4) * 4 + ((r / 8) % 4) * 16) & 63), ((((lane % 8) * 8 + ((r / 1) % 8) * 1) & 63)) * 2, 64, 128)) = t.u;
  }
  // 13:25  
  int t19[32];
  #pragma unroll
  for (int r = 0; r < 32; ++r) t19[r] = offs_8[((r / 8) % 4) * 1];
  int const t20 = (int)(64LL);
  int t21[32];
  #pragma unroll
  for (int r = 0; r < 32; ++r) t21[r] = t20;
  int t22[32];
  #pragma unroll
  for (int r = 0; r < 32; ++r) t22[r] = (int)((unsigned)t19[r] * (unsigned)t21[r]);
  tw_f16* t23[32];
  #pragma unroll
  for (int r = 0; r < 32; ++r) t23[r] = b_ptr_;
  tw_f16* t24[32];
  #pragma unroll
  for (int r = 0; r < 32; ++r) t24[r] = t23[r] + t22[r];
  int t25[8];
  #pragma unroll
  for (int r = 0; r < 8; ++r) t25[r] = offs_6[((r / 1) % 8) * 1];
  tw_f16* t26[32];
  #pragma unroll
  for (int r = 0; r < 32; ++r) t26[r] = t24[((r / 8) % 4) * 8];
  int t27[32];
  #pragma unroll
  for (int r = 0; r < 32; ++r) t27[r] = t25[((r / 1) % 8) * 1];
  tw_f16* t28[32];
  #pragma unroll
  for (int r = 0; r < 32; ++r) t28[r] = t26[r] + t27[r];
  tw_f16 b_29[32];
  #pragma unroll
  for (int g = 0; g < 4; ++g) {
    union { uint4 u; tw_f16 e[8]; } t;
    t.u = *(const uint4*)(t28[g * 8]);
    #pragma unroll
    for (int e = 0; e < 8; ++e) b_29[g * 8 + e] = t.e[e];
  }
  __syncthreads();
  #pragma unroll
  for (int r = 0; r < 32; r += 8) {
    union { uint4 u; tw_f16 e[8]; } t;
  #pragma unroll
    for (int e = 0; e < 8; ++e) t.e[e] = b_29[r + e];
    *(uint4*)(tw_smem_raw + 8192 + tw_swz((((lane / 8 % 4) + (warp % 4) * 4 + ((r / 8) % 4) * 16) & 63), ((((lane % 8) * 8 + ((r / 1) % 8) * 1) & 63)) * 2, 64, 128)) = t.u;
  }
  // 14:9  
  float const t30 = 0.0f;
  float t31[32];
  #pragma unroll
  for (int r = 0; r < 32; ++r) t31[r] = t30;
  // dot 64x64x64 (#mma<v3, warps = [4, 1], instr = 16x64>)
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  float t33[32];
  #pragma unroll
  for (int r = 0; r < 32; ++r) t33[r] = t30;
  float c_32[32];
  #pragma unroll
  for (int r = 0; r < 32; ++r) c_32[r] = t33[r];
  {
    const unsigned smem_u32 = (unsigned)__cvta_generic_to_shared(tw_smem_raw);
    const int gm_ = (warp / 4) % 1, gn_ = warp / 4;
    #pragma unroll
    for (int r = 0; r < 32; ++r) asm volatile("" : "+f"(c_32[r]) :: "memory");
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    #pragma unroll
    for (int ks = 0; ks < 4; ++ks) {
      const unsigned kb = ks * 32;
      const unsigned k0 = ks * 16;
      const unsigned long long da = tw_desc(smem_u32 + 0 + (0 + gm_ * 64) * 128, tw_lin(0, kb, 64, 128), 128);
      const unsigned long long db = tw_desc_mn(smem_u32 + 8192 + tw_lin(0, (0 + gn_ * 64) * 2, 64, 128), k0 * 128, 128, 64);
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 1;\n}"
        : "+f"(c_32[0]), "+f"(c_32[1]), "+f"(c_32[2]), "+f"(c_32[3]), "+f"(c_32[4]), "+f"(c_32[5]), "+f"(c_32[6]), "+f"(c_32[7]), "+f"(c_32[8]), "+f"(c_32[9]), "+f"(c_32[10]), "+f"(c_32[11]), "+f"(c_32[12]), "+f"(c_32[13]), "+f"(c_32[14]), "+f"(c_32[15]), "+f"(c_32[16]), "+f"(c_32[17]), "+f"(c_32[18]), "+f"(c_32[19]), "+f"(c_32[20]), "+f"(c_32[21]), "+f"(c_32[22]), "+f"(c_32[23]), "+f"(c_32[24]), "+f"(c_32[25]), "+f"(c_32[26]), "+f"(c_32[27]), "+f"(c_32[28]), "+f"(c_32[29]), "+f"(c_32[30]), "+f"(c_32[31])
        : "l"(da), "l"(db));
    }
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    #pragma unroll
    for (int r = 0; r < 32; ++r) asm volatile("" : "+f"(c_32[r]) :: "memory");
  }
  // 15:26  
  tw_f16 t34[32];
  #pragma unroll
  for (int r = 0; r < 32; r += 2) tw_f2h2(c_32[r], c_32[r + 1], t34[r], t34[r + 1]);
  int const t35 = (int)(0LL);
  int const t36 = (int)(0LL);
  // #mma<v3, warps = [4, 1], instr = 16x64> -> #blocked<spt = [1, 8], tpw = [4, 8], wpc = [4, 1], order = [1, 0]> through shared memory (2- and 8-element vectors, padded rows)
  __syncthreads();
  #pragma unroll
  for (int r = 0; r < 32; r += 2) {
    union { unsigned u; tw_f16 e[2]; } t;
    #pragma unroll
    for (int e = 0; e < 2; ++e) t.e[e] = t34[r + e];
    *(unsigned*)((tw_f16*)tw_smem + (((lane % 4) * 2 + ((r / 1) % 2) * 1 + ((r / 4) % 8) * 8) & 63) + ((((lane / 4 % 8) + (warp % 4) * 16 + ((r / 2) % 2) * 8) & 63)) * 72) = t.u;
  }
  __syncthreads();
  tw_f16 t37[32];
  #pragma unroll
  for (int r = 0; r < 32; r += 8) {
    union { uint4 u; tw_f16 e[8]; } t;
    t.u = *(uint4*)((tw_f16*)tw_smem + (((lane % 8) * 8 + ((r / 1) % 8) * 1) & 63) + ((((lane / 8 % 4) + (warp % 4) * 4 + ((r / 8) % 4) * 16) & 63)) * 72);
    #pragma unroll
    for (int e = 0; e < 8; ++e) t37[r + e] = t.e[e];
  }
  const bool aligned38 = (((unsigned long long)(c_desc_5_base)) & 15ull) == 0 && ((unsigned long long)(c_desc_5_stride0) * 2ull) % 16ull == 0 && (c_desc_5_shape1) % 8 == 0 && (t36) % 8 == 0;
  if (aligned38) {
  #pragma unroll
  for (int g = 0; g < 4; ++g) {
  const int r = g * 8;
    const long long i0 = (long long)t35 + (((lane / 8 % 4) + (warp % 4) * 4 + ((r / 8) % 4) * 16) & 63);
    const long long i1 = (long long)t36 + (((lane % 8) * 8 + ((r / 1) % 8) * 1) & 63);
    if (i0 >= 0 && i0 < c_desc_5_shape0 && i1 >= 0 && i1 < c_desc_5_shape1) { union { uint4 u; tw_f16 e[8]; } t;
    #pragma unroll
    for (int k = 0; k < 8; ++k) t.e[k] = t37[r + k];
    *(uint4*)&c_desc_5_base[i0 * c_desc_5_stride0 + i1 * c_desc_5_stride1] = t.u; }
  }
  } else {
  #pragma unroll
  for (int r = 0; r < 32; ++r) {
    const long long i0 = (long long)t35 + (((lane / 8 % 4) + (warp % 4) * 4 + ((r / 8) % 4) * 16) & 63);
    const long long i1 = (long long)t36 + (((lane % 8) * 8 + ((r / 1) % 8) * 1) & 63);
    if (i0 >= 0 && i0 < c_desc_5_shape0 && i1 >= 0 && i1 < c_desc_5_shape1) c_desc_5_base[i0 * c_desc_5_stride0 + i1 * c_desc_5_stride1] = t37[r];
  }
  }
}
